// OBI memory with an OBI forwarding window and a protocol checker: the test block of the
// bridge's OBI adapters (cosim/rtl/adapters/obi.py).
//
// Subordinate port s_obi_* (OBI 1.x: req/gnt, addr/we/be/wdata, rvalid/rready/rdata/err):
//   0x000..0x3FF  1 KiB SRAM (256 words, byte enables)
//   0x400..0x7FF  unmapped: err = 1 (writes change nothing, reads return 0)
//   0x800..       forwarded unchanged to the manager port m_obi_* (its gnt, rvalid, rdata
//                 and err come back)
// Up to 2 transactions are outstanding (accepted, not yet answered); responses come back in
// order, a local one at the earliest in the cycle after its grant. With bp_i = 1 an
// internal LFSR withholds local grants and delays local responses at random.
//
// proto_err_o (sticky) checks the manager driving s_obi_* and the subordinate on m_obi_*:
//   [0] req dropped before gnt
//   [1] addr/we/be/wdata changed while req waited for gnt
//   [2] m_obi_rvalid with no forwarded transaction outstanding
module obi_mem (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic        bp_i,
  // OBI subordinate
  input  logic        s_obi_req_i,
  output logic        s_obi_gnt_o,
  input  logic [31:0] s_obi_addr_i,
  input  logic        s_obi_we_i,
  input  logic [3:0]  s_obi_be_i,
  input  logic [31:0] s_obi_wdata_i,
  output logic        s_obi_rvalid_o,
  input  logic        s_obi_rready_i,
  output logic [31:0] s_obi_rdata_o,
  output logic        s_obi_err_o,
  // OBI manager (forwarding window)
  output logic        m_obi_req_o,
  input  logic        m_obi_gnt_i,
  output logic [31:0] m_obi_addr_o,
  output logic        m_obi_we_o,
  output logic [3:0]  m_obi_be_o,
  output logic [31:0] m_obi_wdata_o,
  input  logic        m_obi_rvalid_i,
  output logic        m_obi_rready_o,
  input  logic [31:0] m_obi_rdata_i,
  input  logic        m_obi_err_i,
  // protocol checker
  output logic [2:0]  proto_err_o
);
  logic [31:0] mem_q [256];
  logic [15:0] lfsr_q;
  logic        stall_gnt, stall_rsp;
  assign stall_gnt = bp_i & lfsr_q[0] & lfsr_q[3];
  assign stall_rsp = bp_i & lfsr_q[5] & ~lfsr_q[9];

  // order of outstanding transactions: 1 = forwarded
  logic [1:0] ord_q;     // ord_q[0] is the oldest
  logic [1:0] ord_cnt_q;
  logic       ord_full, head_fwd;
  assign ord_full = ord_cnt_q == 2'd2;
  assign head_fwd = ord_q[0];

  // local responses (data, err)
  logic [32:0] lrsp_q [2];
  logic [1:0]  lrsp_cnt_q;

  logic fwd, lmap, s_hs, l_hs, f_hs, s_rsp, l_pop;
  assign fwd   = s_obi_addr_i[11] | (s_obi_addr_i[31:12] != 20'd0);
  assign lmap  = ~fwd & ~s_obi_addr_i[10];
  assign m_obi_req_o   = s_obi_req_i & fwd & ~ord_full;
  assign m_obi_addr_o  = s_obi_addr_i;
  assign m_obi_we_o    = s_obi_we_i;
  assign m_obi_be_o    = s_obi_be_i;
  assign m_obi_wdata_o = s_obi_wdata_i;
  assign s_obi_gnt_o   = ~ord_full & (fwd ? m_obi_gnt_i : ~stall_gnt);
  assign s_hs  = s_obi_req_i & s_obi_gnt_o;
  assign l_hs  = s_hs & ~fwd;
  assign f_hs  = s_hs & fwd;

  assign s_obi_rvalid_o = (ord_cnt_q != 2'd0) &
                          (head_fwd ? m_obi_rvalid_i : (lrsp_cnt_q != 2'd0) & ~stall_rsp);
  assign s_obi_rdata_o  = head_fwd ? m_obi_rdata_i : lrsp_q[0][31:0];
  assign s_obi_err_o    = head_fwd ? m_obi_err_i : lrsp_q[0][32];
  assign m_obi_rready_o = s_obi_rready_i & (ord_cnt_q != 2'd0) & head_fwd;
  assign s_rsp = s_obi_rvalid_o & s_obi_rready_i;
  assign l_pop = s_rsp & ~head_fwd;

  logic [31:0] bmask, rdata;
  logic [7:0]  widx;
  assign bmask = {{8{s_obi_be_i[3]}}, {8{s_obi_be_i[2]}}, {8{s_obi_be_i[1]}}, {8{s_obi_be_i[0]}}};
  assign widx  = s_obi_addr_i[9:2];
  assign rdata = (lmap && !s_obi_we_i) ? mem_q[widx] : 32'd0;
  logic unused;
  assign unused = ^s_obi_addr_i[1:0];

  always_ff @(posedge clk_i) begin   // SRAM (no reset)
    if (l_hs && lmap && s_obi_we_i)
      mem_q[widx] <= (mem_q[widx] & ~bmask) | (s_obi_wdata_i & bmask);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      lfsr_q <= 16'hACE1;
      ord_q <= '0; ord_cnt_q <= '0;
      lrsp_q[0] <= '0; lrsp_q[1] <= '0; lrsp_cnt_q <= '0;
    end else begin
      lfsr_q <= {lfsr_q[14:0], lfsr_q[15] ^ lfsr_q[13] ^ lfsr_q[12] ^ lfsr_q[10]};
      // order FIFO: pop the head, then push at the tail
      begin
        logic [1:0] o, c;
        o = ord_q; c = ord_cnt_q;
        if (s_rsp) begin o = {1'b0, o[1]}; c = c - 2'd1; end
        if (s_hs) begin o[c[0]] = fwd; c = c + 2'd1; end
        ord_q <= o; ord_cnt_q <= c;
      end
      // local response FIFO
      begin
        logic [32:0] r0, r1;
        logic [1:0]  c;
        r0 = lrsp_q[0]; r1 = lrsp_q[1]; c = lrsp_cnt_q;
        if (l_pop) begin r0 = r1; c = c - 2'd1; end
        if (l_hs) begin
          if (c == 2'd0) r0 = {~lmap, rdata};
          else r1 = {~lmap, rdata};
          c = c + 2'd1;
        end
        lrsp_q[0] <= r0; lrsp_q[1] <= r1; lrsp_cnt_q <= c;
      end
    end
  end

  // ------------------------------------------------------------------ protocol checker
  logic        prev_req, prev_gnt;
  logic [68:0] prev_sig, sig;
  logic [1:0]  fwd_out_q;
  assign sig = {s_obi_addr_i, s_obi_we_i, s_obi_be_i, s_obi_wdata_i};
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      prev_req <= 1'b0; prev_gnt <= 1'b0; prev_sig <= '0; fwd_out_q <= '0;
      proto_err_o <= '0;
    end else begin
      prev_req <= s_obi_req_i;
      prev_gnt <= s_obi_gnt_o;
      prev_sig <= sig;
      fwd_out_q <= fwd_out_q + 2'(f_hs) - 2'(m_obi_rvalid_i & m_obi_rready_o);
      if (prev_req && !prev_gnt && !s_obi_req_i) proto_err_o[0] <= 1'b1;
      if (prev_req && !prev_gnt && s_obi_req_i && sig != prev_sig) proto_err_o[1] <= 1'b1;
      if (m_obi_rvalid_i && fwd_out_q == 2'd0) proto_err_o[2] <= 1'b1;
    end
  end
endmodule
