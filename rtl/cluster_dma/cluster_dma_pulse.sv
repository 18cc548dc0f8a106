// Cluster DMA: event pulse generator.
//
// One pulse per event, each a single cycle with at least one idle cycle in between (so a
// rising-edge counter sees every event even when two finish back to back).
module cluster_dma_pulse (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic inc_i,
  output logic pulse_o
);
  logic [5:0] cnt_q;
  logic       emit;
  assign emit = ~pulse_o & ((cnt_q != 6'd0) | inc_i);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cnt_q   <= '0;
      pulse_o <= 1'b0;
    end else begin
      cnt_q   <= cnt_q + 6'(inc_i) - 6'(emit);
      pulse_o <= emit;
    end
  end
endmodule
