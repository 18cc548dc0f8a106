// Cluster DMA: transfer engine (one transfer and one burst at a time, store and forward).
//
// Each row of the transfer at the head of the queue is split into AXI bursts exactly like
// components.cluster_dma.split_bursts: a burst of n bytes at L2 address a never crosses a
// PAGE_BYTES boundary of a and holds at most MAX_BURST_BEATS 8-byte beats
// (n = min(row bytes left, PAGE - a % PAGE, 8 * MAX_BURST_BEATS - a % 8)).
// Per burst the source beats (aligned 8-byte words) are read into a buffer, then the sink
// beats are written, each taken from two consecutive buffer words shifted by
// (src % 8 - dst % 8) bytes, with byte enables covering exactly the burst's bytes:
//   L2 -> TCDM: AXI read burst (AR/R), then TCDM writes;
//   TCDM -> L2: TCDM reads, then an AXI write burst (AW/W/B).
// An AXI error response (RRESP/BRESP SLVERR or DECERR) ends the transfer with BUS; after a
// failed read burst nothing of that burst is written.
//
// TCDM side: 2 x 32-bit ports (port i at base + 4i of an 8-byte aligned beat), PULP TCDM
// protocol: each port holds req/add/wen/be/data until its own gnt, r_valid/r_data one
// cycle after the grant; only ports with valid bytes are requested. A beat is issued per
// cycle while the ports are granted.
// AXI side: 64-bit AXI4 master, INCR bursts of 8-byte beats (ARSIZE/AWSIZE = 3) at the
// 8-byte aligned burst address, IDs 0, one burst in flight.
module cluster_dma_engine #(
  parameter int unsigned MAX_BURST_BEATS = 256,   // <= 256 (AXI4)
  parameter int unsigned PAGE_BYTES      = 4096   // power of two, >= 8 * MAX_BURST_BEATS
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  // head of the command queue
  input  logic         cmd_valid_i,
  input  logic [31:0]  cmd_l2_i,
  input  logic [31:0]  cmd_tcdm_i,
  input  logic [17:0]  cmd_row_bytes_i,
  input  logic [15:0]  cmd_rows_i,
  input  logic [31:0]  cmd_l2_step_i,
  input  logic [31:0]  cmd_tcdm_step_i,
  input  logic         cmd_to_tcdm_i,
  output logic         done_o,
  output logic         bus_err_o,
  input  logic         ack_i,
  output logic         busy_o,
  // AXI4 master (64-bit)
  output logic [31:0]  awaddr_o,
  output logic [7:0]   awlen_o,
  output logic         awvalid_o,
  input  logic         awready_i,
  output logic [63:0]  wdata_o,
  output logic [7:0]   wstrb_o,
  output logic         wlast_o,
  output logic         wvalid_o,
  input  logic         wready_i,
  input  logic [1:0]   bresp_i,
  input  logic         bvalid_i,
  output logic         bready_o,
  output logic [31:0]  araddr_o,
  output logic [7:0]   arlen_o,
  output logic         arvalid_o,
  input  logic         arready_i,
  input  logic [63:0]  rdata_i,
  input  logic [1:0]   rresp_i,
  input  logic         rvalid_i,
  output logic         rready_o,
  // TCDM master, 2 x 32-bit
  output logic [1:0]   tcdm_req_o,
  input  logic [1:0]   tcdm_gnt_i,
  output logic [63:0]  tcdm_add_o,
  output logic [1:0]   tcdm_wen_o,
  output logic [7:0]   tcdm_be_o,
  output logic [63:0]  tcdm_data_o,
  input  logic [63:0]  tcdm_r_data_i,
  input  logic [1:0]   tcdm_r_valid_i
);
  localparam int unsigned BUF_W     = MAX_BURST_BEATS + 2;  // 257 source beats + 1 spare
  localparam int unsigned MAX_BYTES = 8 * MAX_BURST_BEATS;
  localparam logic [12:0] PAGE      = 13'(PAGE_BYTES);
  localparam int unsigned BW        = $clog2(BUF_W);        // buffer index bits (<= 9)

  typedef enum logic [3:0] {E_IDLE, E_SPLIT, E_AR, E_R, E_TW, E_TR, E_AW, E_B, E_NEXT,
                            E_DONE} estate_e;
  estate_e es_q;

  logic [31:0] row_l2_q, row_tc_q, cur_a_q, cur_t_q;
  logic [18:0] left_q;
  logic [15:0] rows_q;
  logic [11:0] n_q;                    // burst bytes (<= 2048)
  logic [2:0]  src_off_q, dst_off_q;
  logic [8:0]  src_last_q, dst_last_q; // beats - 1
  logic [8:0]  sk_q, dk_q;             // source / sink beat counters
  logic        err_q, src_done_q, aw_done_q, w_done_q;
  logic [1:0]  pend_q;                 // TCDM ports of the current beat not yet granted
  logic [1:0]  outst_q;                // TCDM reads waiting for r_valid
  logic [8:0]  pidx_q [2];             // beat index of each port's last granted read

  logic [31:0] buf_lo [BUF_W];
  logic [31:0] buf_hi [BUF_W];

  // ------------------------------------------------------------------ burst split
  logic [12:0] page_left;
  logic [11:0] beat_left;
  logic [18:0] n_d;
  logic [2:0]  a_off, t_off;
  logic [12:0] src_end, dst_end;
  assign page_left = PAGE - {1'b0, cur_a_q[11:0] & 12'(PAGE_BYTES - 1)};
  assign beat_left = 12'(MAX_BYTES) - {9'd0, cur_a_q[2:0]};
  always_comb begin
    n_d = left_q;
    if (19'(page_left) < n_d) n_d = 19'(page_left);
    if (19'(beat_left) < n_d) n_d = 19'(beat_left);
  end
  assign a_off   = cur_a_q[2:0];
  assign t_off   = cur_t_q[2:0];
  assign src_end = 13'(cmd_to_tcdm_i ? a_off : t_off) + 13'(n_d) - 13'd1;
  assign dst_end = 13'(cmd_to_tcdm_i ? t_off : a_off) + 13'(n_d) - 13'd1;

  // byte lanes of beat m covered by [off, off + n)
  function automatic logic [7:0] lanes(input logic [8:0] m, input logic [2:0] off,
                                       input logic [11:0] n);
    logic [13:0] pos;
    logic [7:0]  r;
    for (int b = 0; b < 8; b++) begin
      pos  = {2'b0, m, 3'b0} + 14'(b);
      r[b] = (pos >= 14'(off)) && (pos < 14'(off) + 14'(n));
    end
    return r;
  endfunction

  function automatic logic [1:0] ports(input logic [7:0] l);
    return {|l[7:4], |l[3:0]};
  endfunction

  // ------------------------------------------------------------------ sink data
  // sink beat m = bytes [8m + s, 8m + s + 8) of the buffer, s = src_off - dst_off
  logic        neg;
  logic [2:0]  shift;
  assign neg   = src_off_q < dst_off_q;
  assign shift = src_off_q - dst_off_q;     // mod 8

  logic [8:0]   w_lo, w_hi;
  logic [63:0]  word_lo, word_hi;
  logic [127:0] pair;
  logic [63:0]  sink_data;
  logic [7:0]   sink_strb;
  assign w_lo = dk_q - 9'(neg);
  assign w_hi = w_lo + 9'd1;
  assign word_lo = (neg && dk_q == 9'd0) || (32'(w_lo) >= BUF_W) ? 64'd0
                 : {buf_hi[w_lo[BW-1:0]], buf_lo[w_lo[BW-1:0]]};
  assign word_hi = (32'(w_hi) >= BUF_W) ? 64'd0 : {buf_hi[w_hi[BW-1:0]], buf_lo[w_hi[BW-1:0]]};
  assign pair      = {word_hi, word_lo} >> {shift, 3'b000};
  assign sink_data = pair[63:0];
  assign sink_strb = lanes(dk_q, dst_off_q, n_q);
  logic unused_pair;
  assign unused_pair = ^{pair[127:64], src_end[12], src_end[2:0], dst_end[12], dst_end[2:0]};

  // ------------------------------------------------------------------ outputs
  logic [31:0] burst_al, tc_beat;
  logic [7:0]  src_strb;
  assign burst_al = {cur_a_q[31:3], 3'b000};
  assign src_strb = lanes(sk_q, src_off_q, n_q);
  assign tc_beat  = {cur_t_q[31:3], 3'b000} + {20'd0, (es_q == E_TR ? sk_q : dk_q), 3'b000};

  assign araddr_o  = burst_al;
  assign arlen_o   = src_last_q[7:0];
  assign arvalid_o = es_q == E_AR;
  assign rready_o  = es_q == E_R;
  assign awaddr_o  = burst_al;
  assign awlen_o   = dst_last_q[7:0];
  assign awvalid_o = (es_q == E_AW) & ~aw_done_q;
  assign wvalid_o  = (es_q == E_AW) & ~w_done_q;
  assign wdata_o   = sink_data;
  assign wstrb_o   = sink_strb;
  assign wlast_o   = dk_q == dst_last_q;
  assign bready_o  = es_q == E_B;

  assign tcdm_req_o  = ((es_q == E_TW) || (es_q == E_TR && !src_done_q)) ? pend_q : 2'b00;
  assign tcdm_add_o  = {tc_beat + 32'd4, tc_beat};
  assign tcdm_wen_o  = (es_q == E_TR) ? 2'b11 : 2'b00;
  assign tcdm_be_o   = (es_q == E_TR) ? src_strb : sink_strb;
  assign tcdm_data_o = sink_data;

  assign done_o    = es_q == E_DONE;
  assign bus_err_o = err_q;
  assign busy_o    = es_q != E_IDLE;

  logic unused_axi;
  assign unused_axi = ^{bresp_i[0], rresp_i[0]};

  // ------------------------------------------------------------------ control
  logic [1:0] hs, pend_left, outst_d;
  assign hs        = tcdm_req_o & tcdm_gnt_i;
  assign pend_left = pend_q & ~tcdm_gnt_i;
  assign outst_d   = (outst_q & ~tcdm_r_valid_i) | hs & {2{es_q == E_TR}};

  logic [18:0] left_after;
  assign left_after = left_q - 19'(n_q);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      es_q <= E_IDLE;
      row_l2_q <= '0; row_tc_q <= '0; cur_a_q <= '0; cur_t_q <= '0;
      left_q <= '0; rows_q <= '0; n_q <= '0;
      src_off_q <= '0; dst_off_q <= '0; src_last_q <= '0; dst_last_q <= '0;
      sk_q <= '0; dk_q <= '0;
      err_q <= 1'b0; src_done_q <= 1'b0; aw_done_q <= 1'b0; w_done_q <= 1'b0;
      pend_q <= '0; outst_q <= '0;
      pidx_q[0] <= '0; pidx_q[1] <= '0;
    end else begin
      outst_q <= outst_d;
      for (int i = 0; i < 2; i++)
        if (hs[i] && es_q == E_TR) pidx_q[i] <= sk_q;
      unique case (es_q)
        E_IDLE: if (cmd_valid_i) begin
          row_l2_q <= cmd_l2_i;
          row_tc_q <= cmd_tcdm_i;
          cur_a_q  <= cmd_l2_i;
          cur_t_q  <= cmd_tcdm_i;
          left_q   <= 19'(cmd_row_bytes_i);
          rows_q   <= cmd_rows_i;
          err_q    <= 1'b0;
          es_q     <= E_SPLIT;
        end
        E_SPLIT: begin
          n_q        <= n_d[11:0];
          src_off_q  <= cmd_to_tcdm_i ? a_off : t_off;
          dst_off_q  <= cmd_to_tcdm_i ? t_off : a_off;
          src_last_q <= src_end[11:3];
          dst_last_q <= dst_end[11:3];
          sk_q <= '0;
          dk_q <= '0;
          src_done_q <= 1'b0;
          aw_done_q  <= 1'b0;
          w_done_q   <= 1'b0;
          if (cmd_to_tcdm_i) begin
            es_q <= E_AR;
          end else begin
            pend_q <= ports(lanes(9'd0, t_off, n_d[11:0]));
            es_q <= E_TR;
          end
        end
        // ---------------- L2 -> TCDM
        E_AR: if (arready_i) es_q <= E_R;
        E_R: if (rvalid_i) begin
          if (rresp_i[1]) err_q <= 1'b1;
          if (sk_q == src_last_q) begin
            if (err_q || rresp_i[1]) begin
              es_q <= E_DONE;
            end else begin
              pend_q <= ports(lanes(9'd0, dst_off_q, n_q));
              es_q <= E_TW;
            end
          end
          sk_q <= sk_q + 9'd1;
        end
        E_TW: begin
          if (pend_left == 2'b00) begin
            if (dk_q == dst_last_q) begin
              es_q <= E_NEXT;
            end else begin
              dk_q   <= dk_q + 9'd1;
              pend_q <= ports(lanes(dk_q + 9'd1, dst_off_q, n_q));
            end
          end else begin
            pend_q <= pend_left;
          end
        end
        // ---------------- TCDM -> L2
        E_TR: begin
          if (!src_done_q) begin
            if (pend_left == 2'b00) begin
              if (sk_q == src_last_q) begin
                src_done_q <= 1'b1;
              end else begin
                sk_q   <= sk_q + 9'd1;
                pend_q <= ports(lanes(sk_q + 9'd1, src_off_q, n_q));
              end
            end else begin
              pend_q <= pend_left;
            end
          end else if (outst_d == 2'b00) begin
            es_q <= E_AW;
          end
        end
        E_AW: begin
          logic aw_d, w_d;
          aw_d = aw_done_q | awready_i;
          w_d  = w_done_q | (wready_i && dk_q == dst_last_q);
          aw_done_q <= aw_d;
          w_done_q  <= w_d;
          if (wvalid_o && wready_i && dk_q != dst_last_q) dk_q <= dk_q + 9'd1;
          if (aw_d && w_d) es_q <= E_B;
        end
        E_B: if (bvalid_i) begin
          if (bresp_i[1]) begin
            err_q <= 1'b1;
            es_q  <= E_DONE;
          end else begin
            es_q <= E_NEXT;
          end
        end
        // ---------------- next burst / row
        E_NEXT: begin
          if (left_after == 19'd0) begin
            if (rows_q == 16'd1) begin
              es_q <= E_DONE;
            end else begin
              rows_q   <= rows_q - 16'd1;
              row_l2_q <= row_l2_q + cmd_l2_step_i;
              row_tc_q <= row_tc_q + cmd_tcdm_step_i;
              cur_a_q  <= row_l2_q + cmd_l2_step_i;
              cur_t_q  <= row_tc_q + cmd_tcdm_step_i;
              left_q   <= 19'(cmd_row_bytes_i);
              es_q     <= E_SPLIT;
            end
          end else begin
            cur_a_q <= cur_a_q + 32'(n_q);
            cur_t_q <= cur_t_q + 32'(n_q);
            left_q  <= left_after;
            es_q    <= E_SPLIT;
          end
        end
        E_DONE: if (ack_i) es_q <= E_IDLE;
        default: es_q <= E_IDLE;
      endcase
    end
  end

  // ------------------------------------------------------------------ burst buffer
  always_ff @(posedge clk_i) begin
    if (es_q == E_R && rvalid_i && 32'(sk_q) < BUF_W) begin
      buf_lo[sk_q[BW-1:0]] <= rdata_i[31:0];
      buf_hi[sk_q[BW-1:0]] <= rdata_i[63:32];
    end
    if (tcdm_r_valid_i[0] && outst_q[0] && 32'(pidx_q[0]) < BUF_W)
      buf_lo[pidx_q[0][BW-1:0]] <= tcdm_r_data_i[31:0];
    if (tcdm_r_valid_i[1] && outst_q[1] && 32'(pidx_q[1]) < BUF_W)
      buf_hi[pidx_q[1][BW-1:0]] <= tcdm_r_data_i[63:32];
  end
endmodule
