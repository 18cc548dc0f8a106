// TCDM bank: a single-port SRAM word bank with the PULP TCDM slave protocol.
//
//   req_i/gnt_o      request/grant in the same cycle (gnt_o = req_i & ~busy_i)
//   add_i            byte address; the bank uses word index add_i[2+OFFSET_BITS +: AW]
//                    (OFFSET_BITS = log2(#banks) for a word-interleaved TCDM, 0 standalone)
//   wen_i            1 = read, 0 = write (PULP convention)
//   be_i/data_i      byte enables / write data
//   r_data_o         read data, valid in the cycle after the grant
//   r_valid_o        one cycle after every granted request (reads and writes)
//   busy_i           back-pressure: while high the bank grants nothing (an arbiter giving
//                    the bank to another branch, or a test)
//
// Synthesizable: the array has no reset (an SRAM macro), control flops reset with rst_ni.
module tcdm_bank #(
  parameter int unsigned NUM_WORDS   = 1024,
  parameter int unsigned OFFSET_BITS = 0,
  parameter int unsigned AW          = (NUM_WORDS > 1) ? $clog2(NUM_WORDS) : 1
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        busy_i,
  input  logic        req_i,
  output logic        gnt_o,
  input  logic [31:0] add_i,
  input  logic        wen_i,
  input  logic [3:0]  be_i,
  input  logic [31:0] data_i,
  output logic [31:0] r_data_o,
  output logic        r_valid_o
);
  logic [31:0] mem_q [NUM_WORDS];
  logic [AW-1:0] idx;
  logic [31:0] wmask;

  assign gnt_o = req_i & ~busy_i;
  assign idx   = add_i[2+OFFSET_BITS +: AW];
  // the interconnect decodes the bank-select and upper address bits
  logic unused_add;
  assign unused_add = ^{add_i};
  assign wmask = {{8{be_i[3]}}, {8{be_i[2]}}, {8{be_i[1]}}, {8{be_i[0]}}};

  always_ff @(posedge clk_i) begin
    if (gnt_o) begin
      if (!wen_i) mem_q[idx] <= (mem_q[idx] & ~wmask) | (data_i & wmask);
      else        r_data_o   <= mem_q[idx];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) r_valid_o <= 1'b0;
    else         r_valid_o <= gnt_o;
  end
endmodule
