// A stand-in for a Verilated Tensil TCU (docs/tensil.md, "Swapping in a Verilated TCU"):
// an APB4 control target that is fed Tensil instruction words one at a time and executes
// only NoOp and Configure, with the configuration registers and the program counter rule
// of the spec (Configure of PROGRAM_COUNTER sets it; every other instruction adds one).
// It tests the RTL swap path of the TCU (transactor + handler + registry), not a TCU.
//
// Target port s_apb_* (12-bit address), no wait states:
//   0x000..0x00C  INSTR0..INSTR3  read/write: the instruction word, bits [31:0] first
//   0x010         ISSUE           write: execute INSTR (one cycle, busy_o high); ignored
//                                 after an error
//   0x014         STATUS          [0] busy, [1] error, [7:4] error kind: 1 opcode the
//                                 stand-in does not execute, 2 a flag or unused operand
//                                 bit set, 3 not a configuration register, 4 value too wide
//   0x018         COUNT           instructions executed
//   0x01C         CYCLES          cycles spent executing
//   0x020         ERROR_PC        index (COUNT) of the failing instruction, 0xFFFFFFFF: none
//   0x024         ID              0x7E45_0001
//   0x040..0x07C  CONFIG0..15     configuration registers (0 for an undefined number)
// Any other address, or a write to a read-only register, answers PSLVERR.
module tensil_stub #(
  parameter int unsigned INSTR_BITS = 72   // 8 + operand bits (TensilArch.instruction_bits)
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        s_apb_psel,
  input  logic        s_apb_penable,
  input  logic        s_apb_pwrite,
  /* verilator lint_off UNUSEDSIGNAL */  // word-aligned registers: paddr[1:0] unused
  input  logic [11:0] s_apb_paddr,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [31:0] s_apb_pwdata,
  input  logic [3:0]  s_apb_pstrb,
  output logic [31:0] s_apb_prdata,
  output logic        s_apb_pready,
  output logic        s_apb_pslverr,
  output logic        busy_o
);
  localparam int unsigned OPB = INSTR_BITS - 8;   // operand bits
  localparam logic [3:0] NOOP = 4'h0, CONFIGURE = 4'hF;

  logic [127:0] instr_q;
  logic [31:0]  cfg_q [16];
  logic [31:0]  count_q, cycles_q, error_pc_q;
  logic [3:0]   error_q;
  logic         pending_q;

  // ------------------------------------------------------------------ decode
  logic [3:0]     opcode, flags, reg_n;
  logic [OPB-1:0] operands;
  logic [OPB-5:0] value;
  assign opcode   = instr_q[INSTR_BITS-1 -: 4];
  assign flags    = instr_q[INSTR_BITS-5 -: 4];
  assign operands = instr_q[OPB-1:0];
  assign reg_n    = operands[3:0];
  assign value    = operands[OPB-1:4];

  // width in bits of each configuration register (0: not one)
  function automatic int unsigned cfg_width(logic [3:0] r);
    case (r)
      4'h0, 4'h4, 4'h9, 4'hA: return 32;
      4'h1, 4'h5:             return 4;
      4'h8, 4'hB:             return 16;
      default:                return 0;
    endcase
  endfunction

  logic [3:0] fault;
  always_comb begin
    fault = 4'd0;
    if (flags != 4'd0) fault = 4'd2;
    else if (opcode == NOOP) begin
      if (operands != '0) fault = 4'd2;
    end else if (opcode == CONFIGURE) begin
      if (cfg_width(reg_n) == 0) fault = 4'd3;
      else if ((value >> cfg_width(reg_n)) != '0) fault = 4'd4;
    end else fault = 4'd1;
  end

  // ------------------------------------------------------------------ APB
  logic       access, wr, rd;
  logic [9:0] widx;
  assign access = s_apb_psel & s_apb_penable;
  assign widx   = s_apb_paddr[11:2];
  assign wr     = access & s_apb_pwrite;
  assign rd     = access & ~s_apb_pwrite;

  logic is_instr, is_issue, is_ro, is_cfg, bad;
  assign is_instr = widx < 10'd4;
  assign is_issue = widx == 10'd4;
  assign is_ro    = widx >= 10'd5 && widx <= 10'd9;
  assign is_cfg   = widx >= 10'd16 && widx < 10'd32;
  assign bad      = ~(is_instr | is_issue | is_ro | is_cfg) | (s_apb_pwrite & (is_ro | is_cfg))
                    | (~s_apb_pwrite & is_issue);

  logic [31:0] rdata;
  always_comb begin
    rdata = '0;
    case (widx)
      10'd0: rdata = instr_q[31:0];
      10'd1: rdata = instr_q[63:32];
      10'd2: rdata = instr_q[95:64];
      10'd3: rdata = instr_q[127:96];
      10'd5: rdata = {24'd0, error_q, 2'd0, error_q != 4'd0, pending_q};
      10'd6: rdata = count_q;
      10'd7: rdata = cycles_q;
      10'd8: rdata = error_pc_q;
      10'd9: rdata = 32'h7E45_0001;
      default: if (is_cfg) rdata = cfg_q[widx[3:0]];
    endcase
  end
  assign s_apb_pready  = 1'b1;
  assign s_apb_pslverr = access & bad;
  assign s_apb_prdata  = rd & ~bad ? rdata : '0;
  assign busy_o        = pending_q;

  logic [31:0] strb_mask;
  assign strb_mask = {{8{s_apb_pstrb[3]}}, {8{s_apb_pstrb[2]}}, {8{s_apb_pstrb[1]}},
                      {8{s_apb_pstrb[0]}}};

  // ------------------------------------------------------------------ state
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      instr_q    <= '0;
      for (int i = 0; i < 16; i++) cfg_q[i] <= '0;
      cfg_q[8]   <= 32'h64;          // TIMEOUT
      cfg_q[9]   <= 32'hFFFF_FFFF;   // TRACEPOINT
      count_q    <= '0;
      cycles_q   <= '0;
      error_pc_q <= 32'hFFFF_FFFF;
      error_q    <= '0;
      pending_q  <= 1'b0;
    end else begin
      if (wr && !bad && is_instr)
        instr_q[widx[1:0]*32 +: 32] <= (instr_q[widx[1:0]*32 +: 32] & ~strb_mask)
                                       | (s_apb_pwdata & strb_mask);
      if (wr && !bad && is_issue && error_q == 4'd0) pending_q <= 1'b1;
      if (pending_q) begin
        pending_q <= 1'b0;
        cycles_q  <= cycles_q + 32'd1;
        if (fault != 4'd0) begin
          error_q    <= fault;
          error_pc_q <= count_q;
        end else begin
          count_q <= count_q + 32'd1;
          if (opcode == CONFIGURE) cfg_q[reg_n] <= 32'(value);
          if (!(opcode == CONFIGURE && reg_n == 4'hA)) cfg_q[10] <= cfg_q[10] + 32'd1;
        end
      end
    end
  end
endmodule
