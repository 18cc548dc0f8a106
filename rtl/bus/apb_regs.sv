// APB4 register block with an APB forwarding window and a protocol checker: the test block
// of the bridge's APB adapters (cosim/rtl/adapters/apb.py).
//
// Target port s_apb_* (12-bit address):
//   0x000..0x01C  REG0..REG7, read/write, PSTRB byte enables
//   0x020         ID (read-only, ID_VALUE); a write answers PSLVERR
//   0x024         WAIT (read/write, bits [2:0]): wait states (PREADY low cycles) that every
//                 later local access inserts in its access phase
//   0x028..0x7FF  unmapped: PSLVERR, reads 0
//   0x800..0xFFF  forwarded unchanged to the initiator port m_apb_* (PREADY, PRDATA and
//                 PSLVERR come back from there)
// A failing write changes nothing.
//
// proto_err_o (sticky) is an independent check of the initiator driving s_apb_*:
//   [0] PENABLE without PSEL
//   [1] an access phase (PSEL & PENABLE) not preceded by its setup phase
//   [2] PADDR/PWRITE/PWDATA/PSTRB/PPROT changed between setup and the end of the access
//   [3] a setup phase not followed by the access phase
module apb_regs #(
  parameter logic [31:0] ID_VALUE = 32'hA9B0_0001
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  // APB target
  input  logic        s_apb_psel,
  input  logic        s_apb_penable,
  input  logic        s_apb_pwrite,
  input  logic [11:0] s_apb_paddr,
  input  logic [31:0] s_apb_pwdata,
  input  logic [3:0]  s_apb_pstrb,
  input  logic [2:0]  s_apb_pprot,
  output logic [31:0] s_apb_prdata,
  output logic        s_apb_pready,
  output logic        s_apb_pslverr,
  // APB initiator (forwarding window)
  output logic        m_apb_psel,
  output logic        m_apb_penable,
  output logic        m_apb_pwrite,
  output logic [11:0] m_apb_paddr,
  output logic [31:0] m_apb_pwdata,
  output logic [3:0]  m_apb_pstrb,
  output logic [2:0]  m_apb_pprot,
  input  logic [31:0] m_apb_prdata,
  input  logic        m_apb_pready,
  input  logic        m_apb_pslverr,
  // protocol checker
  output logic [3:0]  proto_err_o
);
  logic [31:0] regs_q [8];
  logic [2:0]  wait_q, wcnt_q;

  logic       fwd, access, local_acc, done;
  logic [9:0] widx;
  assign fwd       = s_apb_paddr[11];
  assign access    = s_apb_psel & s_apb_penable;
  assign local_acc = access & ~fwd;
  assign widx      = s_apb_paddr[11:2];

  logic is_reg, is_id, is_wait, bad;
  assign is_reg  = widx < 10'd8;
  assign is_id   = widx == 10'd8;
  assign is_wait = widx == 10'd9;
  assign bad     = ~(is_reg | is_id | is_wait) | (is_id & s_apb_pwrite);

  logic        local_ready;
  logic [31:0] local_rdata;
  assign local_ready = wcnt_q == wait_q;
  assign done        = local_acc & local_ready;
  always_comb begin
    local_rdata = '0;
    if (is_reg) local_rdata = regs_q[widx[2:0]];
    else if (is_id) local_rdata = ID_VALUE;
    else if (is_wait) local_rdata = {29'd0, wait_q};
  end

  logic [31:0] strb_mask;
  assign strb_mask = {{8{s_apb_pstrb[3]}}, {8{s_apb_pstrb[2]}}, {8{s_apb_pstrb[1]}},
                      {8{s_apb_pstrb[0]}}};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i < 8; i++) regs_q[i] <= '0;
      wait_q <= '0;
      wcnt_q <= '0;
    end else begin
      if (done) wcnt_q <= '0;
      else if (local_acc) wcnt_q <= wcnt_q + 3'd1;
      if (done && s_apb_pwrite && !bad) begin
        if (is_reg) regs_q[widx[2:0]] <= (regs_q[widx[2:0]] & ~strb_mask) | (s_apb_pwdata & strb_mask);
        if (is_wait && s_apb_pstrb[0]) wait_q <= s_apb_pwdata[2:0];
      end
    end
  end

  // ------------------------------------------------------------------ outputs / forwarding
  assign m_apb_psel    = s_apb_psel & fwd;
  assign m_apb_penable = s_apb_penable & fwd;
  assign m_apb_pwrite  = s_apb_pwrite;
  assign m_apb_paddr   = s_apb_paddr;
  assign m_apb_pwdata  = s_apb_pwdata;
  assign m_apb_pstrb   = s_apb_pstrb;
  assign m_apb_pprot   = s_apb_pprot;
  assign s_apb_prdata  = fwd ? m_apb_prdata : (local_acc && !s_apb_pwrite ? local_rdata : '0);
  assign s_apb_pready  = fwd ? m_apb_pready : local_ready;
  assign s_apb_pslverr = fwd ? m_apb_pslverr : (local_acc & local_ready & bad);

  // ------------------------------------------------------------------ protocol checker
  logic        prev_sel, prev_en, prev_ready;
  logic [51:0] prev_sig, sig;
  assign sig = {s_apb_paddr, s_apb_pwrite, s_apb_pwdata, s_apb_pstrb, s_apb_pprot};
  logic in_transfer;
  assign in_transfer = prev_sel & ~(prev_en & prev_ready);   // same transfer goes on
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      prev_sel <= 1'b0; prev_en <= 1'b0; prev_ready <= 1'b0; prev_sig <= '0;
      proto_err_o <= '0;
    end else begin
      prev_sel   <= s_apb_psel;
      prev_en    <= s_apb_penable;
      prev_ready <= s_apb_pready;
      prev_sig   <= sig;
      if (s_apb_penable && !s_apb_psel) proto_err_o[0] <= 1'b1;
      if (access && !(prev_sel && !prev_en) && !(prev_sel && prev_en && !prev_ready))
        proto_err_o[1] <= 1'b1;
      if (s_apb_psel && in_transfer && sig != prev_sig) proto_err_o[2] <= 1'b1;
      if (prev_sel && !prev_en && !access) proto_err_o[3] <= 1'b1;
    end
  end
endmodule
