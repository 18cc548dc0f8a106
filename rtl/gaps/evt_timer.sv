// A countdown that raises an event: the test block of RTL events bound into the cluster
// Event Unit and the fabric controller's interrupt lines (tests/test_rtl_events.py).
//
// Target port periph_* (PULP HWPE peripheral protocol: gnt = req, r_valid one cycle later):
//   0x0  COUNT   write N: count N cycles, then pulse evt_o for one cycle; read: cycles left
//   0x4  EVENTS  read: events raised since reset (writes ignored)
//   0x8  ID      read: ID_VALUE
// busy_o is 1 while counting. A write to COUNT while counting restarts the countdown.
module evt_timer #(
  parameter logic [31:0] ID_VALUE = 32'h5EB7_0001
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        periph_req_i,
  output logic        periph_gnt_o,
  /* verilator lint_off UNUSEDSIGNAL */
  input  logic [31:0] periph_add_i,     // the window's offset: bits [3:2] decode
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic        periph_wen_i,     // 1 = read
  input  logic [3:0]  periph_be_i,
  input  logic [31:0] periph_data_i,
  output logic [31:0] periph_r_data_o,
  output logic        periph_r_valid_o,
  output logic        evt_o,
  output logic        busy_o
);
  logic [31:0] left_q, events_q, rdata_q;
  logic        counting_q, rvalid_q, evt_q;
  logic [1:0]  widx;
  logic        wr_count;

  assign widx         = periph_add_i[3:2];
  assign periph_gnt_o = periph_req_i;
  assign wr_count     = periph_req_i & ~periph_wen_i & (widx == 2'd0) & (periph_be_i == 4'hF);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      left_q     <= '0;
      events_q   <= '0;
      counting_q <= 1'b0;
      evt_q      <= 1'b0;
      rvalid_q   <= 1'b0;
      rdata_q    <= '0;
    end else begin
      evt_q    <= 1'b0;
      rvalid_q <= periph_req_i;
      if (periph_req_i && periph_wen_i) begin
        unique case (widx)
          2'd0:    rdata_q <= left_q;
          2'd1:    rdata_q <= events_q;
          2'd2:    rdata_q <= ID_VALUE;
          default: rdata_q <= '0;
        endcase
      end
      if (wr_count) begin
        left_q     <= periph_data_i;
        counting_q <= 1'b1;
      end else if (counting_q) begin
        if (left_q == '0) begin
          counting_q <= 1'b0;
          evt_q      <= 1'b1;
          events_q   <= events_q + 32'd1;
        end else begin
          left_q <= left_q - 32'd1;
        end
      end
    end
  end

  assign periph_r_data_o  = rdata_q;
  assign periph_r_valid_o = rvalid_q;
  assign evt_o            = evt_q;
  assign busy_o           = counting_q | evt_q;
endmodule
