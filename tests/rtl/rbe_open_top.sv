// Test harness of the open RBE RTL (pulp-platform/rbe, rtl/third_party/rbe-rtl): rbe_top_wrap
// with an ideal memory on its nine 32-bit TCDM master ports and the peripheral port left to
// the cocotb testbench (tests/rtl/rbe_open_tb.py).
//
// Ideal memory: every request is granted in the cycle it is made (gnt = 1 on all ports) and
// a read's data and r_valid come the next cycle (fixed latency 1, the TCDM protocol's
// minimum); a write is stored at the clock edge that grants it. MEM_WORDS 32-bit words from
// byte address 0; addresses wrap modulo the memory size.
//
// The harness counts, in hardware, the cycles from the clock edge that takes the TRIGGER
// write (peripheral word 0) to the first cycle evt_o[0][0] (end of job, core 0) is high, and
// the TCDM reads and writes (port-words) of the job.
module rbe_open_top #(
  parameter int unsigned MEM_WORDS = 65536
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        periph_req,
  output logic        periph_gnt,
  input  logic [31:0] periph_add,
  input  logic        periph_wen,      // 1: read, 0: write (PULP convention)
  input  logic [31:0] periph_data,
  output logic [31:0] periph_r_data,
  output logic        periph_r_valid,
  input  logic        mem_we,          // backdoor write of one word (testbench data loading)
  input  logic [31:0] mem_waddr,       // word index
  input  logic [31:0] mem_wdata,
  input  logic [31:0] mem_raddr,       // backdoor read (combinational)
  output logic [31:0] mem_rdata,
  output logic        done,            // evt_o[0][0]
  output logic [31:0] job_cycles,
  output logic [31:0] tcdm_reads,
  output logic [31:0] tcdm_writes
);
  localparam int unsigned MP = rbe_package::BANDWIDTH / 32;
  localparam int unsigned AW = $clog2(MEM_WORDS);

  logic [MP-1:0]       tcdm_req, tcdm_wen, tcdm_r_valid;
  logic [MP-1:0][31:0] tcdm_add, tcdm_data, tcdm_r_data;
  logic [MP-1:0][3:0]  tcdm_be;
  logic [rbe_package::NR_CORES-1:0][hwpe_ctrl_package::REGFILE_N_EVT-1:0] evt;
  hci_package::hci_interconnect_ctrl_t hci_ctrl;

  logic [31:0] mem [MEM_WORDS];

  rbe_top_wrap i_rbe (
    .clk_i, .rst_ni, .test_mode_i(1'b0), .hci_ctrl_o(hci_ctrl), .evt_o(evt),
    .tcdm_req, .tcdm_gnt({MP{1'b1}}), .tcdm_add, .tcdm_wen, .tcdm_be, .tcdm_data,
    .tcdm_r_data, .tcdm_r_valid,
    .periph_req, .periph_gnt, .periph_add, .periph_wen, .periph_be(4'hf), .periph_data,
    .periph_id(16'h1), .periph_r_data, .periph_r_valid, .periph_r_id()
  );

  assign done = evt[0][0];
  assign mem_rdata = mem[mem_raddr[AW-1:0]];

  always_ff @(posedge clk_i) begin
    for (int p = 0; p < MP; p++) begin
      tcdm_r_valid[p] <= tcdm_req[p] & tcdm_wen[p];
      if (tcdm_req[p] & tcdm_wen[p])
        tcdm_r_data[p] <= mem[tcdm_add[p][AW+1:2]];
      if (tcdm_req[p] & ~tcdm_wen[p])
        for (int b = 0; b < 4; b++)
          if (tcdm_be[p][b]) mem[tcdm_add[p][AW+1:2]][8*b +: 8] <= tcdm_data[p][8*b +: 8];
    end
    if (mem_we) mem[mem_waddr[AW-1:0]] <= mem_wdata;
  end

  // job timing and traffic, counted in hardware (no Python per cycle)
  logic busy;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy <= 1'b0; job_cycles <= '0; tcdm_reads <= '0; tcdm_writes <= '0;
    end else begin
      if (periph_req & ~periph_wen & (periph_add[7:0] == 8'h00)) begin
        busy <= 1'b1; job_cycles <= '0; tcdm_reads <= '0; tcdm_writes <= '0;
      end else if (busy) begin
        job_cycles <= job_cycles + 1;
        if (done) busy <= 1'b0;
        for (int p = 0; p < MP; p++) begin
          if (tcdm_req[p] & tcdm_wen[p])  tcdm_reads  <= tcdm_reads + MP;
          if (tcdm_req[p] & ~tcdm_wen[p]) tcdm_writes <= tcdm_writes + MP;
        end
      end
    end
  end
endmodule
