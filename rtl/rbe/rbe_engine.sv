// RBE engine: job validation, loop sequencer, 9-port streamer, BinConv array, norm-quant.
//
// Executes the jobs of components/rbe bit-exactly (docs/rbe.md): same validation and error
// codes, same TCDM bit-plane layouts, and the same 288-bit access sequence as
// components.rbe.streamer_trace (loop nest: tile row, tile column, K_out tile, K_in tile,
// pass; LOAD then COMPUTE per (K_in tile, pass), NORMQUANT then STREAMOUT per (tile,
// K_out tile)). With a TCDM that always grants, the job takes exactly the cycles of
// components.rbe.job_cycles: setup 2, one cycle per access, one accumulate cycle after the
// weight beats of each output channel, a 7-cycle fill/drain after each weight stream, 2
// cycles per norm-quant group (the COMPUTE cost calibrated on the paper's 1610 ops/cycle
// peak, docs/rbe.md).
//
// Datapath (per 3x3 output tile, one 32-channel K_out tile at a time):
//   xbuf  5x5 pixels x 4 input bit-planes x 32 channels (cleared before each LOAD, so
//         pixels past the input edge and bit-planes beyond the pass are zero)
//   acc   9 output pixels x 32 output channels x 32 bit (wrap-around, as the model)
//   COMPUTE 3x3: per weight word (one output channel, one weight bit, 9 taps x 32 ch):
//         acc[p][ko] += (sum_j sum_tap popcount(w[tap] & x[p+tap][j]) << j) << i << 4*pass
//   COMPUTE 1x1: per output channel (W bit-planes on ports 0..W-1):
//         acc[p][ko] += sum_i sum_j popcount(w[i] & x[p][j]) << (i+j) << 4*pass
//   NORMQUANT: 48-bit scale*acc+bias, arithmetic >> shift, saturate to unsigned O bits;
//         the quantised value replaces the accumulator
//   STREAMOUT: word (pixel, bit o) = bit o of the 32 quantised channels of the pixel
//
// TCDM master: 9 ports x 32 bit issued together (port i at base + 4*i). Each port keeps
// req high until its own gnt; an access is complete when all 9 were granted. r_valid and
// r_data of a port come exactly one cycle after its grant (TCDM protocol); reads of idle
// ports are discarded, writes of idle ports have be = 0.
module rbe_engine #(
  parameter int unsigned   N_JOB     = 12,
  parameter logic [31:0]   TCDM_BASE = 32'h1000_0000,
  parameter logic [31:0]   TCDM_SIZE = 32'h0002_0000
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,
  input  logic                 start_i,
  input  logic                 clear_i,
  input  logic [32*N_JOB-1:0]  job_i,
  output logic                 idle_o,
  output logic                 done_o,
  output logic [7:0]           err_o,
  // TCDM master (9 ports)
  output logic [8:0]           tcdm_req_o,
  input  logic [8:0]           tcdm_gnt_i,
  output logic [9*32-1:0]      tcdm_add_o,
  output logic [8:0]           tcdm_wen_o,
  output logic [9*4-1:0]       tcdm_be_o,
  output logic [9*32-1:0]      tcdm_data_o,
  input  logic [9*32-1:0]      tcdm_r_data_i,
  input  logic [8:0]           tcdm_r_valid_i
);
  // ================================================================ job fields
  logic [31:0] x_addr, w_addr, nq_addr, y_addr, xrs, xps, yrs, yps;
  logic [15:0] h_out, w_out, k_in, k_out;
  logic [3:0]  w_bits, i_bits, o_bits;
  logic [1:0]  mode;
  logic [4:0]  shift;
  assign x_addr  = job_i[32*0 +: 32];
  assign w_addr  = job_i[32*1 +: 32];
  assign nq_addr = job_i[32*2 +: 32];
  assign y_addr  = job_i[32*3 +: 32];
  assign w_out   = job_i[32*4 +: 16];
  assign h_out   = job_i[32*4+16 +: 16];
  assign k_in    = job_i[32*5 +: 16];
  assign k_out   = job_i[32*5+16 +: 16];
  assign xrs     = job_i[32*6 +: 32];
  assign xps     = job_i[32*7 +: 32];
  assign yrs     = job_i[32*8 +: 32];
  assign yps     = job_i[32*9 +: 32];
  assign w_bits  = job_i[32*10 +: 4];
  assign i_bits  = job_i[32*10+8 +: 4];
  assign o_bits  = job_i[32*10+16 +: 4];
  assign mode    = job_i[32*11 +: 2];
  assign shift   = job_i[32*11+8 +: 5];
  logic unused_job;  // bits the register map ignores; RELU cannot change unsigned outputs
  assign unused_job = ^{job_i[32*10+4 +: 4], job_i[32*10+12 +: 4], job_i[32*10+20 +: 12],
                        job_i[32*11+2 +: 6], job_i[32*11+13 +: 19]};

  logic        is3;
  logic [7:0]  ki_n, ko_n;                    // K_in/32, K_out/32 (<= 128)
  logic [16:0] h_in, w_in;
  assign is3  = (mode == 2'd0);
  assign ki_n = k_in[12:5];
  assign ko_n = k_out[12:5];
  assign h_in = {1'b0, h_out} + (is3 ? 17'd2 : 17'd0);
  assign w_in = {1'b0, w_out} + (is3 ? 17'd2 : 17'd0);
  logic unused_k;
  assign unused_k = ^{k_in[15:13], k_out[15:13], k_in[4:0], k_out[4:0]};

  // ================================================================ validation
  function automatic logic bits_ok(input logic [3:0] b);
    return (b >= 4'd2) && (b <= 4'd8);
  endfunction
  function automatic logic ch_ok(input logic [15:0] k);
    return (k != 16'd0) && (k[4:0] == 5'd0) && (k <= 16'd4096);
  endfunction
  logic [63:0] lo, hi, x_end, w_end, nq_end, y_end;
  always_comb begin
    lo     = {32'd0, TCDM_BASE};
    hi     = {32'd0, TCDM_BASE} + {32'd0, TCDM_SIZE};
    x_end  = {32'd0, x_addr} + 64'(h_in - 17'd1) * {32'd0, xrs} + 64'(w_in - 17'd1) * {32'd0, xps}
             + 64'(ki_n) * 64'(i_bits) * 64'd4;
    y_end  = {32'd0, y_addr} + 64'({1'b0, h_out} - 17'd1) * {32'd0, yrs}
             + 64'({1'b0, w_out} - 17'd1) * {32'd0, yps} + 64'(ko_n) * 64'(o_bits) * 64'd4;
    w_end  = {32'd0, w_addr} + 64'(k_out) * 64'(ki_n) * 64'(w_bits) * (is3 ? 64'd36 : 64'd4);
    nq_end = {32'd0, nq_addr} + 64'(k_out) * 64'd6;
  end
  logic [7:0] verr;
  always_comb begin
    if      (!bits_ok(w_bits)) verr = 8'd1;
    else if (!bits_ok(i_bits)) verr = 8'd2;
    else if (!bits_ok(o_bits)) verr = 8'd3;
    else if (!ch_ok(k_in))     verr = 8'd4;
    else if (!ch_ok(k_out))    verr = 8'd5;
    else if (h_out == 16'd0 || w_out == 16'd0) verr = 8'd6;
    else if (mode[1])          verr = 8'd7;
    else if (|{x_addr[1:0], w_addr[1:0], nq_addr[1:0], y_addr[1:0],
               xrs[1:0], xps[1:0], yrs[1:0], yps[1:0]}) verr = 8'd8;
    else if ({32'd0, x_addr} < lo || x_end > hi)  verr = 8'd9;
    else if ({32'd0, w_addr} < lo || w_end > hi)  verr = 8'd10;
    else if ({32'd0, nq_addr} < lo || nq_end > hi) verr = 8'd11;
    else if ({32'd0, y_addr} < lo || y_end > hi)  verr = 8'd12;
    else                       verr = 8'd0;
  end

  // ================================================================ sequencer
  typedef enum logic [3:0] {
    S_IDLE, S_SETUP0, S_SETUP1, S_LOAD, S_COMP, S_ACC, S_FILL, S_NQ, S_NQCALC, S_SO
  } state_e;
  state_e      st_q;
  localparam logic [2:0] FILL_LAST = 3'd6;   // components.rbe CycleParams.compute_fill - 1
  logic [16:0] th_q, tw_q;                 // output tile origin
  logic [7:0]  kt_q, g_q;                  // K_out tile, K_in tile
  logic        p_q;                        // input pass
  logic [2:0]  r_q, c_q;                   // LOAD patch pixel
  logic [4:0]  kol_q;                      // output channel in the K_out tile
  logic [2:0]  wb_q;                       // weight bit (3x3)
  logic [2:0]  fill_q;                     // fill/drain cycle (0..FILL_LAST)
  logic [2:0]  grp_q;                      // norm-quant group
  logic [1:0]  dy_q, dx_q;                 // STREAMOUT pixel
  logic [2:0]  ob_q;                       // STREAMOUT output bit

  logic [3:0]  nb;                         // input bit-planes of this pass
  logic [2:0]  patch;
  logic [16:0] rem_h, rem_w, rem_ho, rem_wo;
  logic [2:0]  rows_v, cols_v;             // valid patch rows/cols of this tile
  logic [1:0]  so_rows, so_cols;           // valid output rows/cols of this tile
  assign nb     = p_q ? (i_bits - 4'd4) : ((i_bits > 4'd4) ? 4'd4 : i_bits);
  assign patch  = is3 ? 3'd5 : 3'd3;
  assign rem_h  = h_in - th_q;
  assign rem_w  = w_in - tw_q;
  assign rem_ho = {1'b0, h_out} - th_q;
  assign rem_wo = {1'b0, w_out} - tw_q;
  assign rows_v = (rem_h  < 17'(patch)) ? rem_h[2:0]  : patch;
  assign cols_v = (rem_w  < 17'(patch)) ? rem_w[2:0]  : patch;
  assign so_rows = (rem_ho < 17'd3) ? rem_ho[1:0] : 2'd3;
  assign so_cols = (rem_wo < 17'd3) ? rem_wo[1:0] : 2'd3;

  // streamer issue stage
  logic [8:0] pend_q;
  logic       is_acc, acc_done, adv;
  assign is_acc   = (st_q == S_LOAD) || (st_q == S_COMP) || (st_q == S_NQ) || (st_q == S_SO);
  assign acc_done = is_acc && ((pend_q & ~tcdm_gnt_i) == 9'd0);
  assign adv      = is_acc ? acc_done : (st_q != S_IDLE);

  // addresses (port 0)
  logic [31:0] a_load, a_comp, a_nq, a_so, a_base;
  logic [31:0] ko_glob;
  assign ko_glob = {19'd0, kt_q, kol_q};
  assign a_load = x_addr + 32'(th_q + 17'(r_q)) * xrs + 32'(tw_q + 17'(c_q)) * xps
                  + ((32'(g_q) * 32'(i_bits)) + (p_q ? 32'd4 : 32'd0)) * 32'd4;
  assign a_comp = is3 ? (w_addr + ((ko_glob * 32'(ki_n) + 32'(g_q)) * 32'(w_bits) + 32'(wb_q)) * 32'd36)
                      : (w_addr + (ko_glob * 32'(ki_n) + 32'(g_q)) * 32'(w_bits) * 32'd4);
  assign a_nq   = nq_addr + 32'(kt_q) * 32'd192 + 32'(grp_q) * 32'd24;
  assign a_so   = y_addr + 32'(th_q + 17'(dy_q)) * yrs + 32'(tw_q + 17'(dx_q)) * yps
                  + (32'(kt_q) * 32'(o_bits) + 32'(ob_q)) * 32'd4;
  always_comb begin
    unique case (st_q)
      S_LOAD:  a_base = a_load;
      S_COMP:  a_base = a_comp;
      S_NQ:    a_base = a_nq;
      default: a_base = a_so;
    endcase
  end

  // STREAMOUT data: bit ob of the 32 quantised channels of pixel (dy, dx)
  logic [31:0] acc_q [9][32];
  logic [31:0] so_word;
  logic [3:0]  so_pix;
  assign so_pix = 4'(dy_q) * 4'd3 + 4'(dx_q);
  always_comb begin
    for (int c = 0; c < 32; c++) so_word[c] = acc_q[so_pix][c][5'(ob_q)];
  end

  always_comb begin
    for (int i = 0; i < 9; i++) begin
      tcdm_add_o[32*i +: 32]  = a_base + 32'(4 * i);
      tcdm_wen_o[i]           = (st_q != S_SO);
      tcdm_be_o[4*i +: 4]     = (st_q != S_SO) ? 4'hF : ((i == 0) ? 4'hF : 4'h0);
      tcdm_data_o[32*i +: 32] = (st_q == S_SO && i == 0) ? so_word : 32'd0;
    end
    tcdm_req_o = is_acc ? pend_q : 9'd0;
  end

  // ================================================================ response stage
  typedef enum logic [1:0] {R_LOAD, R_COMP, R_NQ} rkind_e;
  logic        rsp_q;          // a read access completed last cycle: its data is here now
  rkind_e      rk_q;
  logic [4:0]  rpix_q;         // LOAD: patch pixel r*5+c
  logic [3:0]  rnb_q;
  logic [4:0]  rkol_q;
  logic [2:0]  rwb_q;
  logic        rp_q;
  logic [2:0]  rgrp_q;
  logic [31:0] hold_q [9];
  logic [31:0] rword [9];
  always_comb begin
    for (int i = 0; i < 9; i++)
      rword[i] = tcdm_r_valid_i[i] ? tcdm_r_data_i[32*i +: 32] : hold_q[i];
  end

  // ---------------------------------------------------------------- BinConv array
  logic [31:0] xbuf_q [25][4];
  logic [31:0] contrib [9];
  // one Core (output pixel p): 9 Blocks (taps) x 4 BinConvs (input bits), weight bit wb
  function automatic logic [31:0] core3x3(input int p, input logic [2:0] wb);
    logic [31:0] sum, s;
    sum = 32'd0;
    for (int j = 0; j < 4; j++) begin
      s = 32'd0;
      for (int t = 0; t < 9; t++)
        s = s + 32'($countones(rword[t] & xbuf_q[(p / 3 + t / 3) * 5 + p % 3 + t % 3][j]));
      sum = sum + (s << j);
    end
    return sum << wb;
  endfunction
  // 1x1: one Block per weight bit (ports 0..W-1), 4 BinConvs per Block
  function automatic logic [31:0] core1x1(input int p);
    logic [31:0] sum;
    sum = 32'd0;
    for (int i = 0; i < 8; i++)
      if (4'(i) < w_bits)
        for (int j = 0; j < 4; j++)
          sum = sum + (32'($countones(rword[i] & xbuf_q[(p / 3) * 5 + p % 3][j])) << (i + j));
    return sum;
  endfunction
  always_comb begin
    for (int p = 0; p < 9; p++) begin
      contrib[p] = is3 ? core3x3(p, rwb_q) : core1x1(p);
      if (rp_q) contrib[p] = contrib[p] << 4;
    end
  end

  // ---------------------------------------------------------------- quantizer
  logic [7:0] q [9][4];
  logic [7:0] omax;
  assign omax = 8'((9'd1 << o_bits) - 9'd1);
  always_comb begin
    for (int r = 0; r < 4; r++) begin
      logic [15:0] scale;
      logic [31:0] bias;
      logic [4:0]  ch;
      scale = 16'(({rword[(48 * r) / 32 + 1], rword[(48 * r) / 32]} >> ((48 * r) % 32)));
      bias  = 32'(({rword[(48 * r + 16) / 32 + 1], rword[(48 * r + 16) / 32]} >> ((48 * r + 16) % 32)));
      ch    = {rgrp_q, 2'(r)};
      for (int p = 0; p < 9; p++) begin
        /* verilator lint_off UNUSEDSIGNAL */
        logic signed [63:0] prod;       // |scale*acc+bias| < 2**47: bits 63:48 are sign copies
        /* verilator lint_on UNUSEDSIGNAL */
        logic signed [47:0] v48;
        logic signed [47:0] sh;
        prod = $signed({48'd0, scale}) * $signed({{32{acc_q[p][ch][31]}}, acc_q[p][ch]})
               + $signed({{32{bias[31]}}, bias});
        v48  = prod[47:0];
        sh   = v48 >>> shift;
        if (sh[47])                                 q[p][r] = 8'd0;
        else if ((sh >> o_bits) != 48'sd0)          q[p][r] = omax;
        else                                        q[p][r] = sh[7:0];
      end
    end
  end

  // ================================================================ sequential
  logic finish, clr_acc, clr_buf;
  logic last_ob, last_dx, last_dy, last_kt, last_tw, last_th;
  assign last_ob = (4'(ob_q) + 4'd1 >= o_bits);
  assign last_dx = (3'(dx_q) + 3'd1 >= 3'(so_cols));
  assign last_dy = (3'(dy_q) + 3'd1 >= 3'(so_rows));
  assign last_kt = (9'(kt_q) + 9'd1 >= 9'(ko_n));
  assign last_tw = (tw_q + 17'd3 >= {1'b0, w_out});
  assign last_th = (th_q + 17'd3 >= {1'b0, h_out});
  logic [7:0] done_err;
  always_comb begin
    finish  = 1'b0;
    clr_acc = 1'b0;
    clr_buf = 1'b0;
    done_err = 8'd0;
    if (adv) begin
      unique case (st_q)
        S_SETUP1: begin
          if (verr != 8'd0) begin finish = 1'b1; done_err = verr; end
          else begin clr_acc = 1'b1; clr_buf = 1'b1; end
        end
        S_FILL: clr_buf = (fill_q == FILL_LAST) && ((!p_q && i_bits > 4'd4) || (9'(g_q) + 9'd1 < 9'(ki_n)));
        S_SO: if (last_ob && last_dx && last_dy) begin
          if (last_kt && last_tw && last_th) finish = 1'b1;
          else begin clr_acc = 1'b1; clr_buf = 1'b1; end
        end
        default: ;
      endcase
    end
  end
  assign idle_o = (st_q == S_IDLE);
  assign done_o = finish;
  assign err_o  = done_err;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q <= S_IDLE;
      {th_q, tw_q} <= '0;
      {kt_q, g_q, p_q, r_q, c_q, kol_q, wb_q, fill_q, grp_q, dy_q, dx_q, ob_q} <= '0;
      pend_q <= 9'h1FF;
      rsp_q  <= 1'b0;
      rk_q   <= R_LOAD;
      {rpix_q, rnb_q, rkol_q, rwb_q, rp_q, rgrp_q} <= '0;
    end else if (clear_i) begin
      st_q   <= S_IDLE;
      pend_q <= 9'h1FF;
      rsp_q  <= 1'b0;
    end else begin
      // ---- streamer issue bookkeeping
      if (is_acc) pend_q <= acc_done ? 9'h1FF : (pend_q & ~tcdm_gnt_i);
      rsp_q <= acc_done && (st_q != S_SO);
      if (acc_done) begin
        rk_q   <= (st_q == S_LOAD) ? R_LOAD : (st_q == S_COMP) ? R_COMP : R_NQ;
        rpix_q <= 5'(r_q) * 5'd5 + 5'(c_q);
        rnb_q  <= nb;
        rkol_q <= kol_q;
        rwb_q  <= wb_q;
        rp_q   <= p_q;
        rgrp_q <= grp_q;
      end
      // ---- sequencer
      if (st_q == S_IDLE) begin
        if (start_i) st_q <= S_SETUP0;
      end else if (adv) begin
        unique case (st_q)
          S_SETUP0: st_q <= S_SETUP1;
          S_SETUP1: begin
            {th_q, tw_q} <= '0;
            {kt_q, g_q, p_q, r_q, c_q, kol_q, wb_q, fill_q, grp_q, dy_q, dx_q, ob_q} <= '0;
            st_q <= (verr != 8'd0) ? S_IDLE : S_LOAD;
          end
          S_LOAD: begin
            if (c_q + 3'd1 < cols_v) c_q <= c_q + 3'd1;
            else begin
              c_q <= 3'd0;
              if (r_q + 3'd1 < rows_v) r_q <= r_q + 3'd1;
              else begin
                r_q <= 3'd0; kol_q <= 5'd0; wb_q <= 3'd0; st_q <= S_COMP;
              end
            end
          end
          S_COMP: begin
            if (is3 && 4'(wb_q) + 4'd1 < w_bits) wb_q <= wb_q + 3'd1;
            else begin
              wb_q <= 3'd0;
              st_q <= S_ACC;
            end
          end
          S_ACC: begin                           // the channel's accumulate cycle
            if (kol_q != 5'd31) begin kol_q <= kol_q + 5'd1; st_q <= S_COMP; end
            else begin fill_q <= 3'd0; st_q <= S_FILL; end
          end
          S_FILL: begin
            if (fill_q != FILL_LAST) fill_q <= fill_q + 3'd1;
            else if (!p_q && i_bits > 4'd4) begin p_q <= 1'b1; st_q <= S_LOAD; end
            else if (g_q + 8'd1 < ki_n) begin g_q <= g_q + 8'd1; p_q <= 1'b0; st_q <= S_LOAD; end
            else begin g_q <= 8'd0; p_q <= 1'b0; grp_q <= 3'd0; st_q <= S_NQ; end
          end
          S_NQ: st_q <= S_NQCALC;
          S_NQCALC: begin
            if (grp_q != 3'd7) begin grp_q <= grp_q + 3'd1; st_q <= S_NQ; end
            else begin dy_q <= 2'd0; dx_q <= 2'd0; ob_q <= 3'd0; st_q <= S_SO; end
          end
          S_SO: begin
            if (4'(ob_q) + 4'd1 < o_bits) ob_q <= ob_q + 3'd1;
            else begin
              ob_q <= 3'd0;
              if (dx_q + 2'd1 < so_cols) dx_q <= dx_q + 2'd1;
              else begin
                dx_q <= 2'd0;
                if (dy_q + 2'd1 < so_rows) dy_q <= dy_q + 2'd1;
                else begin
                  dy_q <= 2'd0;
                  if (finish) st_q <= S_IDLE;
                  else begin
                    st_q <= S_LOAD;
                    if (kt_q + 8'd1 < ko_n) kt_q <= kt_q + 8'd1;
                    else begin
                      kt_q <= 8'd0;
                      if (tw_q + 17'd3 < {1'b0, w_out}) tw_q <= tw_q + 17'd3;
                      else begin tw_q <= 17'd0; th_q <= th_q + 17'd3; end
                    end
                  end
                end
              end
            end
          end
          default: st_q <= S_IDLE;
        endcase
      end
    end
  end

  // ---------------------------------------------------------------- datapath registers
  always_ff @(posedge clk_i) begin
    for (int i = 0; i < 9; i++)
      if (tcdm_r_valid_i[i]) hold_q[i] <= tcdm_r_data_i[32*i +: 32];
    if (clr_buf) begin
      for (int x = 0; x < 25; x++)
        for (int j = 0; j < 4; j++) xbuf_q[x][j] <= 32'd0;
    end else if (rsp_q && rk_q == R_LOAD) begin
      for (int j = 0; j < 4; j++)
        if (4'(j) < rnb_q) xbuf_q[rpix_q][j] <= rword[j];
    end
    if (clr_acc) begin
      for (int p = 0; p < 9; p++)
        for (int c = 0; c < 32; c++) acc_q[p][c] <= 32'd0;
    end else if (rsp_q && rk_q == R_COMP) begin
      for (int p = 0; p < 9; p++) acc_q[p][rkol_q] <= acc_q[p][rkol_q] + contrib[p];
    end else if (rsp_q && rk_q == R_NQ) begin
      for (int p = 0; p < 9; p++)
        for (int r = 0; r < 4; r++) acc_q[p][{rgrp_q, 2'(r)}] <= {24'd0, q[p][r]};
    end
  end
endmodule
