// Cluster DMA: register file, transfer IDs, command decoder and command queue.
//
// Mirrors components/cluster_dma.py (docs/memory.md, "Cluster DMA") register for register:
//   0x00 CMD          read: reserve the lowest free ID (else 0xFFFFFFFF);
//                     write: push a command (oldest reserved ID, else lowest free, else
//                     dropped with ERROR.FULL)
//   0x04 STATUS  ro   bit i: transfer i queued or running
//   0x08 FREE         write: free DONE/RESERVED IDs (BUSY ones are ignored); read: allocated
//   0x0C TCDM_ADDR, 0x10 L2_ADDR, 0x14 ROW_LEN, 0x18 L2_STRIDE, 0x1C TCDM_STRIDE   rw
//   0x20 ERROR        sticky error bits, write 1 to clear
//   0x24 ERR_ID  ro   ID of the last failed transfer (0xFFFFFFFF for a dropped push)
//   0x28 LAST_ID ro   ID taken by the last push (0xFFFFFFFF when dropped)
//   0x2C DONE    ro   bit i: transfer i finished and not yet freed
// Writes merge their byte enables into the register's stored value (the last value written),
// and CMD/FREE/ERROR act on the merged value, exactly like tlm.RegisterBank. A write with
// be = 0 does nothing; writes to read-only registers are ignored; other offsets read 0.
//
// Command checks (model order): ZERO_LEN, then GEOMETRY (2D), then L2_RANGE | TCDM_RANGE,
// in 64-bit arithmetic. They run in a small sequential decoder (18-cycle divider for
// LEN / ROW_LEN, 16-cycle shift-add multiplier for (rows - 1) * stride); the peripheral port
// withholds its grant while a command is decoded, so no register access can observe an
// intermediate state. A failing command moves no data: its ID finishes at once.
//
// Peripheral protocol (PULP HWPE periph): gnt = req unless decoding; r_valid/r_id/r_data
// one cycle after every granted request (r_data = 0 for writes).
module cluster_dma_regs #(
  parameter int unsigned ID_W        = 8,
  parameter int unsigned QUEUE_DEPTH = 16,          // transfer IDs, 1..32
  parameter logic [31:0] L2_BASE     = 32'h1C00_0000,
  parameter logic [31:0] L2_END      = 32'h1C10_0000, // first address after the L2 window
  parameter logic [31:0] TCDM_BASE   = 32'h1000_0000,
  parameter logic [31:0] TCDM_SIZE   = 32'h0002_0000
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  // peripheral target
  input  logic            req_i,
  output logic            gnt_o,
  input  logic [31:0]     add_i,
  input  logic            wen_i,      // 1 = read
  input  logic [3:0]      be_i,
  input  logic [31:0]     data_i,
  input  logic [ID_W-1:0] id_i,
  output logic [31:0]     r_data_o,
  output logic            r_valid_o,
  output logic [ID_W-1:0] r_id_o,
  // head of the command queue, towards the engine
  output logic            cmd_valid_o,
  output logic [31:0]     cmd_l2_o,
  output logic [31:0]     cmd_tcdm_o,
  output logic [17:0]     cmd_row_bytes_o,
  output logic [15:0]     cmd_rows_o,
  output logic [31:0]     cmd_l2_step_o,
  output logic [31:0]     cmd_tcdm_step_o,
  output logic            cmd_to_tcdm_o,
  input  logic            eng_done_i,     // the head transfer finished (held until ack)
  input  logic            eng_bus_err_i,  // ... with an error response
  output logic            eng_ack_o,      // finish bookkeeping done, head popped
  // events (one-cycle pulses, at least one idle cycle apart)
  output logic            evt_o,          // EVT_EN completion (towards the Event Unit)
  output logic            irq_o,          // IRQ_EN completion or failure
  output logic            err_o,          // every failure
  output logic            busy_o          // decoding, or transfers queued
);
  localparam int unsigned N = QUEUE_DEPTH;
  localparam logic [1:0] S_FREE = 2'd0, S_RES = 2'd1, S_BUSY = 2'd2, S_DONE = 2'd3;
  // register map: rtl/regs/cluster_dma_regs_pkg.sv, generated from the model's registers.yaml
  localparam int unsigned E_FULL    = cluster_dma_regs_pkg::ERROR_FULL_LSB;
  localparam int unsigned E_ZERO    = cluster_dma_regs_pkg::ERROR_ZERO_LEN_LSB;
  localparam int unsigned E_L2      = cluster_dma_regs_pkg::ERROR_L2_RANGE_LSB;
  localparam int unsigned E_TCDM    = cluster_dma_regs_pkg::ERROR_TCDM_RANGE_LSB;
  localparam int unsigned E_GEOM    = cluster_dma_regs_pkg::ERROR_GEOMETRY_LSB;
  localparam int unsigned E_BUS     = cluster_dma_regs_pkg::ERROR_BUS_LSB;
  localparam int unsigned C_TO_TCDM = cluster_dma_regs_pkg::CMD_L2_TO_TCDM_LSB;
  localparam int unsigned C_L2_2D   = cluster_dma_regs_pkg::CMD_L2_2D_LSB;
  localparam int unsigned C_EVT     = cluster_dma_regs_pkg::CMD_EVT_EN_LSB;
  localparam int unsigned C_IRQ     = cluster_dma_regs_pkg::CMD_IRQ_EN_LSB;
  localparam int unsigned C_TC_2D   = cluster_dma_regs_pkg::CMD_TCDM_2D_LSB;
  localparam int unsigned C_AUTO    = cluster_dma_regs_pkg::CMD_AUTO_FREE_LSB;
  localparam logic [31:0] ID_FULL = cluster_dma_regs_pkg::ID_FULL;
  // word indices (offset / 4) of the registers
  localparam logic [7:0] R_CMD    = 8'(cluster_dma_regs_pkg::CMD_OFFSET >> 2);
  localparam logic [7:0] R_STATUS = 8'(cluster_dma_regs_pkg::STATUS_OFFSET >> 2);
  localparam logic [7:0] R_FREE   = 8'(cluster_dma_regs_pkg::FREE_OFFSET >> 2);
  localparam logic [7:0] R_TCDM   = 8'(cluster_dma_regs_pkg::TCDM_ADDR_OFFSET >> 2);
  localparam logic [7:0] R_L2     = 8'(cluster_dma_regs_pkg::L2_ADDR_OFFSET >> 2);
  localparam logic [7:0] R_ROW    = 8'(cluster_dma_regs_pkg::ROW_LEN_OFFSET >> 2);
  localparam logic [7:0] R_L2S    = 8'(cluster_dma_regs_pkg::L2_STRIDE_OFFSET >> 2);
  localparam logic [7:0] R_TCS    = 8'(cluster_dma_regs_pkg::TCDM_STRIDE_OFFSET >> 2);
  localparam logic [7:0] R_ERROR  = 8'(cluster_dma_regs_pkg::ERROR_OFFSET >> 2);
  localparam logic [7:0] R_ERRID  = 8'(cluster_dma_regs_pkg::ERR_ID_OFFSET >> 2);
  localparam logic [7:0] R_LASTID = 8'(cluster_dma_regs_pkg::LAST_ID_OFFSET >> 2);
  localparam logic [7:0] R_DONE   = 8'(cluster_dma_regs_pkg::DONE_OFFSET >> 2);
  localparam logic [63:0] L2_LO = {32'd0, L2_BASE}, L2_HI = {32'd0, L2_END};
  localparam logic [63:0] TC_LO = {32'd0, TCDM_BASE}, TC_HI = {32'd0, TCDM_BASE} + {32'd0, TCDM_SIZE};

  // ------------------------------------------------------------------ state
  logic [1:0]   st_q    [N];
  logic [N-1:0] older_q [N];      // older_q[i][j]: i was reserved before j
  logic [31:0]  tcdm_q, l2_q, row_q, l2s_q, tcs_q;   // staged address registers
  logic [31:0]  cmd_val_q, free_val_q, err_val_q;     // stored values of CMD/FREE/ERROR
  logic [5:0]   err_bits_q;
  logic [31:0]  err_id_q, last_id_q;

  logic [N-1:0] m_free, m_res, m_busy, m_done, has_older;
  always_comb begin
    for (int i = 0; i < N; i++) begin
      m_free[i] = st_q[i] == S_FREE;
      m_res[i]  = st_q[i] == S_RES;
      m_busy[i] = st_q[i] == S_BUSY;
      m_done[i] = st_q[i] == S_DONE;
    end
    for (int i = 0; i < N; i++) begin
      has_older[i] = 1'b0;
      for (int j = 0; j < N; j++)
        if (m_res[j] && older_q[j][i]) has_older[i] = 1'b1;
    end
  end

  // lowest free ID, oldest reserved ID
  logic       lf_ok, or_ok;
  logic [4:0] lf_id, or_id;
  always_comb begin
    lf_ok = 1'b0; lf_id = '0; or_ok = 1'b0; or_id = '0;
    for (int i = N - 1; i >= 0; i--) begin
      if (m_free[i]) begin lf_ok = 1'b1; lf_id = 5'(i); end
      if (m_res[i] && !has_older[i]) begin or_ok = 1'b1; or_id = 5'(i); end
    end
  end

  // ------------------------------------------------------------------ peripheral decode
  typedef enum logic [2:0] {D_IDLE, D_CHECK, D_DIV, D_MUL, D_RANGE, D_FIN} dstate_e;
  dstate_e ds_q;

  logic       rd, wr;
  logic [7:0] widx;
  logic [31:0] bem;
  assign gnt_o = req_i & (ds_q == D_IDLE);
  assign rd    = gnt_o & wen_i;
  assign wr    = gnt_o & ~wen_i & (be_i != 4'd0);
  assign widx  = add_i[9:2];
  assign bem   = {{8{be_i[3]}}, {8{be_i[2]}}, {8{be_i[1]}}, {8{be_i[0]}}};
  logic unused_add;
  assign unused_add = ^{add_i[31:10], add_i[1:0]};

  function automatic logic [31:0] merge(input logic [31:0] old, input logic [31:0] nw,
                                        input logic [31:0] m);
    return (old & ~m) | (nw & m);
  endfunction

  logic [31:0] cmd_word, free_word, err_word;
  assign cmd_word  = merge(cmd_val_q, data_i, bem);
  assign free_word = merge(free_val_q, data_i, bem);
  assign err_word  = merge(err_val_q, data_i, bem);

  logic reserve, push, free_wr, err_wr;
  assign reserve = rd & (widx == R_CMD);
  assign push    = wr & (widx == R_CMD);
  assign free_wr = wr & (widx == R_FREE);
  assign err_wr  = wr & (widx == R_ERROR);

  logic [4:0] push_id;
  logic       push_full;
  assign push_id   = or_ok ? or_id : lf_id;
  assign push_full = ~or_ok & ~lf_ok;

  function automatic logic [31:0] ext(input logic [N-1:0] m);
    return 32'(m);
  endfunction

  logic [31:0] rdata;
  always_comb begin
    unique case (widx)
      R_CMD:    rdata = lf_ok ? 32'(lf_id) : ID_FULL;
      R_STATUS: rdata = ext(m_busy);
      R_FREE:   rdata = ext(~m_free);
      R_TCDM:   rdata = tcdm_q;
      R_L2:     rdata = l2_q;
      R_ROW:    rdata = row_q;
      R_L2S:    rdata = l2s_q;
      R_TCS:    rdata = tcs_q;
      R_ERROR:  rdata = 32'(err_bits_q);
      R_ERRID:  rdata = err_id_q;
      R_LASTID: rdata = last_id_q;
      R_DONE:   rdata = ext(m_done);
      default:  rdata = '0;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_valid_o <= 1'b0;
      r_id_o    <= '0;
      r_data_o  <= '0;
    end else begin
      r_valid_o <= gnt_o;
      if (gnt_o) begin
        r_id_o   <= id_i;
        r_data_o <= rd ? rdata : '0;
      end
    end
  end

  // ------------------------------------------------------------------ command decoder
  logic [23:0] d_word_q;
  logic [31:0] d_l2_q, d_tc_q, d_rl_q, d_l2s_q, d_tcs_q;
  logic [4:0]  d_id_q;
  logic        d_full_q;
  logic [5:0]  d_err_q;
  logic [17:0] div_q, rem_q;      // quotient (dividend shifted in), remainder
  logic [4:0]  cnt_q;
  logic [15:0] mul_b_q;           // rows - 1, shifted right
  logic [47:0] mc_l2_q, mc_tc_q;  // strides, shifted left
  logic [47:0] acc_l2_q, acc_tc_q;

  logic        d_l2_2d, d_tc_2d, d_2d;
  logic [17:0] d_len;
  logic [31:0] d_l2_step, d_tc_step;
  assign d_l2_2d   = d_word_q[C_L2_2D];
  assign d_tc_2d   = d_word_q[C_TC_2D];
  assign d_2d      = d_l2_2d | d_tc_2d;
  assign d_len     = d_word_q[17:0];
  assign d_l2_step = d_l2_2d ? d_l2s_q : d_rl_q;
  assign d_tc_step = d_tc_2d ? d_tcs_q : d_rl_q;

  logic zero_len, geom_fast;
  assign zero_len  = (d_len == 18'd0) | (d_2d & (d_rl_q == 32'd0));
  assign geom_fast = (d_rl_q[1:0] != 2'd0) | (d_rl_q > 32'(d_len))
                   | (d_l2_2d & ((d_l2s_q[1:0] != 2'd0) | (d_l2s_q < d_rl_q)))
                   | (d_tc_2d & ((d_tcs_q[1:0] != 2'd0) | (d_tcs_q < d_rl_q)));

  // restoring division step
  logic [18:0] div_shift;
  logic        div_ge;
  assign div_shift = {rem_q, div_q[17]};
  assign div_ge    = div_shift >= {1'b0, d_rl_q[17:0]};

  // range check of the decoded command
  logic [17:0] row_bytes;
  logic [63:0] span_l2, span_tc;
  logic        l2_bad, tc_bad;
  assign row_bytes = d_2d ? d_rl_q[17:0] : d_len;
  assign span_l2   = {16'd0, acc_l2_q} + 64'(row_bytes);
  assign span_tc   = {16'd0, acc_tc_q} + 64'(row_bytes);
  assign l2_bad    = ({32'd0, d_l2_q} < L2_LO) | ({32'd0, d_l2_q} + span_l2 > L2_HI);
  assign tc_bad    = ({32'd0, d_tc_q} < TC_LO) | ({32'd0, d_tc_q} + span_tc > TC_HI);

  logic dec_fin, dec_fail;
  assign dec_fin  = ds_q == D_FIN;
  assign dec_fail = dec_fin & (d_err_q != 6'd0);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ds_q <= D_IDLE;
      d_word_q <= '0; d_l2_q <= '0; d_tc_q <= '0; d_rl_q <= '0; d_l2s_q <= '0; d_tcs_q <= '0;
      d_id_q <= '0; d_full_q <= 1'b0; d_err_q <= '0;
      div_q <= '0; rem_q <= '0; cnt_q <= '0; mul_b_q <= '0;
      mc_l2_q <= '0; mc_tc_q <= '0; acc_l2_q <= '0; acc_tc_q <= '0;
    end else begin
      unique case (ds_q)
        D_IDLE: if (push) begin
          d_word_q <= cmd_word[23:0];
          d_l2_q <= l2_q; d_tc_q <= tcdm_q; d_rl_q <= row_q; d_l2s_q <= l2s_q; d_tcs_q <= tcs_q;
          d_id_q <= push_id;
          d_full_q <= push_full;
          d_err_q <= '0;
          ds_q <= D_CHECK;
        end
        D_CHECK: begin
          acc_l2_q <= '0;
          acc_tc_q <= '0;
          if (d_full_q) begin
            d_err_q[E_FULL] <= 1'b1;
            ds_q <= D_FIN;
          end else if (zero_len) begin
            d_err_q[E_ZERO] <= 1'b1;
            ds_q <= D_FIN;
          end else if (!d_2d) begin
            ds_q <= D_RANGE;                 // 1D: one row of LEN bytes
          end else if (geom_fast) begin
            d_err_q[E_GEOM] <= 1'b1;
            ds_q <= D_FIN;
          end else begin
            div_q <= d_len;
            rem_q <= '0;
            cnt_q <= 5'd0;
            ds_q <= D_DIV;
          end
        end
        D_DIV: begin
          rem_q <= div_ge ? 18'(div_shift - {1'b0, d_rl_q[17:0]}) : div_shift[17:0];
          div_q <= {div_q[16:0], div_ge};
          cnt_q <= cnt_q + 5'd1;
          if (cnt_q == 5'd17) ds_q <= D_MUL;
        end
        D_MUL: begin
          if (cnt_q == 5'd18) begin         // first cycle: check the remainder, load
            if (rem_q != 18'd0) begin
              d_err_q[E_GEOM] <= 1'b1;
              ds_q <= D_FIN;
            end
            mul_b_q <= 16'(div_q - 18'd1);   // rows - 1 (rows <= 65535: ROW_LEN >= 4)
            mc_l2_q <= {16'd0, d_l2_step};
            mc_tc_q <= {16'd0, d_tc_step};
            cnt_q <= 5'd0;
          end else begin
            if (mul_b_q[0]) begin
              acc_l2_q <= acc_l2_q + mc_l2_q;
              acc_tc_q <= acc_tc_q + mc_tc_q;
            end
            mul_b_q <= mul_b_q >> 1;
            mc_l2_q <= mc_l2_q << 1;
            mc_tc_q <= mc_tc_q << 1;
            cnt_q <= cnt_q + 5'd1;
            if (cnt_q == 5'd15) ds_q <= D_RANGE;
          end
        end
        D_RANGE: begin
          d_err_q[E_L2]   <= l2_bad;
          d_err_q[E_TCDM] <= tc_bad;
          ds_q <= D_FIN;
        end
        D_FIN: ds_q <= D_IDLE;
        default: ds_q <= D_IDLE;
      endcase
    end
  end

  // ------------------------------------------------------------------ command queue
  localparam int unsigned QW = (N > 1) ? $clog2(N) : 1;
  logic [4:0]  q_id    [N];
  logic [31:0] q_l2    [N];
  logic [31:0] q_tc    [N];
  logic [17:0] q_rb    [N];
  logic [15:0] q_rows  [N];
  logic [31:0] q_l2s   [N];
  logic [31:0] q_tcs   [N];
  logic [3:0]  q_flags [N];     // {auto_free, irq, evt, to_tcdm}
  logic [QW-1:0] q_rd_q, q_wr_q;
  logic [5:0]  q_cnt_q;

  logic enq, pop;
  assign enq = dec_fin & (d_err_q == 6'd0);
  assign eng_ack_o = eng_done_i & ~dec_fail;   // a failing push finishes first
  assign pop = eng_ack_o;

  function automatic logic [QW-1:0] qnext(input logic [QW-1:0] p);
    return (32'(p) == N - 1) ? '0 : p + QW'(1);
  endfunction

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      q_rd_q <= '0; q_wr_q <= '0; q_cnt_q <= '0;
    end else begin
      if (enq) q_wr_q <= qnext(q_wr_q);
      if (pop) q_rd_q <= qnext(q_rd_q);
      q_cnt_q <= q_cnt_q + 6'(enq) - 6'(pop);
    end
  end

  always_ff @(posedge clk_i) begin   // queue storage (no reset)
    if (enq) begin
      q_id[q_wr_q]    <= d_id_q;
      q_l2[q_wr_q]    <= d_l2_q;
      q_tc[q_wr_q]    <= d_tc_q;
      q_rb[q_wr_q]    <= row_bytes;
      q_rows[q_wr_q]  <= d_2d ? div_q[15:0] : 16'd1;
      q_l2s[q_wr_q]   <= d_l2_step;
      q_tcs[q_wr_q]   <= d_tc_step;
      q_flags[q_wr_q] <= {d_word_q[C_AUTO], d_word_q[C_IRQ], d_word_q[C_EVT], d_word_q[C_TO_TCDM]};
    end
  end

  logic [4:0] h_id;
  logic [3:0] h_flags;
  assign cmd_valid_o     = q_cnt_q != 6'd0;
  assign h_id            = q_id[q_rd_q];
  assign h_flags         = q_flags[q_rd_q];
  assign cmd_l2_o        = q_l2[q_rd_q];
  assign cmd_tcdm_o      = q_tc[q_rd_q];
  assign cmd_row_bytes_o = q_rb[q_rd_q];
  assign cmd_rows_o      = q_rows[q_rd_q];
  assign cmd_l2_step_o   = q_l2s[q_rd_q];
  assign cmd_tcdm_step_o = q_tcs[q_rd_q];
  assign cmd_to_tcdm_o   = h_flags[0];
  assign busy_o          = (ds_q != D_IDLE) | cmd_valid_o;

  // ------------------------------------------------------------------ IDs, registers, errors
  logic dfin_auto, dfin_irq, efin_auto;
  assign dfin_auto = d_word_q[C_AUTO];
  assign dfin_irq  = d_word_q[C_IRQ];
  assign efin_auto = h_flags[3];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i < N; i++) begin
        st_q[i]    <= S_FREE;
        older_q[i] <= '0;
      end
      tcdm_q <= '0; l2_q <= '0; row_q <= '0; l2s_q <= '0; tcs_q <= '0;
      cmd_val_q <= '0; free_val_q <= '0; err_val_q <= '0;
      err_bits_q <= '0;
      err_id_q   <= ID_FULL;
      last_id_q  <= ID_FULL;
    end else begin
      // register writes
      if (wr) begin
        unique case (widx)
          R_CMD:   cmd_val_q  <= cmd_word;
          R_FREE:  free_val_q <= free_word;
          R_TCDM:  tcdm_q     <= merge(tcdm_q, data_i, bem);
          R_L2:    l2_q       <= merge(l2_q, data_i, bem);
          R_ROW:   row_q      <= merge(row_q, data_i, bem);
          R_L2S:   l2s_q      <= merge(l2s_q, data_i, bem);
          R_TCS:   tcs_q      <= merge(tcs_q, data_i, bem);
          R_ERROR: err_val_q  <= err_word;
          default: ;          // read-only or unmapped: ignored
        endcase
      end
      // ID states (the sources never touch the same ID in one cycle: a finishing ID is
      // BUSY, which reserve/push/FREE leave alone)
      for (int i = 0; i < N; i++) begin
        if (reserve && lf_ok && lf_id == 5'(i)) begin
          st_q[i] <= S_RES;
          for (int j = 0; j < N; j++) begin
            older_q[j][i] <= m_res[j];        // every reserved ID is older than i
            older_q[i][j] <= 1'b0;
          end
        end
        if (push && !push_full && push_id == 5'(i)) st_q[i] <= S_BUSY;
        if (free_wr && free_word[i] && (m_res[i] || m_done[i])) st_q[i] <= S_FREE;
        if (dec_fail && !d_full_q && d_id_q == 5'(i)) st_q[i] <= dfin_auto ? S_FREE : S_DONE;
        if (eng_ack_o && h_id == 5'(i)) st_q[i] <= efin_auto ? S_FREE : S_DONE;
      end
      if (push) last_id_q <= push_full ? ID_FULL : 32'(push_id);
      // errors: write-1-to-clear first, then this cycle's failures
      begin
        logic [5:0] eb;
        eb = err_wr ? (err_bits_q & ~err_word[5:0]) : err_bits_q;
        if (dec_fail) eb = eb | d_err_q;
        if (eng_ack_o && eng_bus_err_i) eb[E_BUS] = 1'b1;
        err_bits_q <= eb;
      end
      if (dec_fail) err_id_q <= d_full_q ? ID_FULL : 32'(d_id_q);
      else if (eng_ack_o && eng_bus_err_i) err_id_q <= 32'(h_id);
    end
  end

  // ------------------------------------------------------------------ events
  logic inc_evt, inc_irq, inc_err;
  assign inc_evt = eng_ack_o & h_flags[1] & ~eng_bus_err_i;
  assign inc_irq = (dec_fail & dfin_irq) | (eng_ack_o & h_flags[2]);
  assign inc_err = dec_fail | (eng_ack_o & eng_bus_err_i);

  cluster_dma_pulse i_evt (.clk_i, .rst_ni, .inc_i(inc_evt), .pulse_o(evt_o));
  cluster_dma_pulse i_irq (.clk_i, .rst_ni, .inc_i(inc_irq), .pulse_o(irq_o));
  cluster_dma_pulse i_err (.clk_i, .rst_ni, .inc_i(inc_err), .pulse_o(err_o));
endmodule
