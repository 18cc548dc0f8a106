// RBE HWPE controller: peripheral target, dual-context job register file, job queue.
//
// Register map = components/rbe/registers.yaml (docs/rbe.md), mirrored bit for bit:
//   0x00 TRIGGER (w)   commit the acquired context (else STATUS.ERR_TRIGGER_NO_JOB)
//   0x04 ACQUIRE (r)   acquire the context at the pointer: job ID, or 0xFFFFFFFF busy
//   0x08 FINISHED (r)  jobs finished since reset/soft clear
//   0x0C STATUS (rw1c) RUNNING, QUEUED, ACQUIRED, FULL, LAST_ERROR[15:8], sticky [19:16]
//   0x10 RUNNING_JOB (r)
//   0x14 SOFT_CLEAR (w) abort, drop contexts, reset counters/IDs/errors; data 0 also zeroes
//                       the job registers of both contexts
//   0x40..0x6C job registers of the acquired context (reads: the context at the pointer)
// Anything else (reserved, unaligned, beyond 0x6C, writes to read-only registers) sets
// STATUS.ERR_BAD_ACCESS and reads 0.
//
// Peripheral protocol (PULP HWPE periph): gnt = req (always ready); r_valid/r_id/r_data one
// cycle after every granted request (reads and writes; r_data is 0 for writes).
module rbe_regs #(
  parameter int unsigned ID_W   = 8,
  parameter int unsigned OFF_W  = 10,   // peripheral window: 2**OFF_W bytes
  parameter int unsigned N_JOB  = 12
) (
  input  logic              clk_i,
  input  logic              rst_ni,
  // peripheral target
  input  logic              req_i,
  output logic              gnt_o,
  input  logic [31:0]       add_i,
  input  logic              wen_i,       // 1 = read
  input  logic [3:0]        be_i,
  input  logic [31:0]       data_i,
  input  logic [ID_W-1:0]   id_i,
  output logic [31:0]       r_data_o,
  output logic              r_valid_o,
  output logic [ID_W-1:0]   r_id_o,
  // engine side
  input  logic              engine_idle_i,
  output logic              start_o,      // pop: the context at run_ptr starts (1 cycle)
  output logic              clear_o,      // soft clear: abort the engine (1 cycle)
  output logic [32*N_JOB-1:0] job_o,      // job registers of the running context
  input  logic              done_i,       // the running job finished (1 cycle)
  input  logic [7:0]        err_i,        // its validation error code (0 = OK)
  output logic              evt_o         // end-of-job event (1-cycle pulse)
);
  localparam logic [1:0] FREE = 2'd0, ACQ = 2'd1, QUEUED = 2'd2, RUN = 2'd3;
  // offsets: rtl/regs/rbe_regs_pkg.sv, generated from components/rbe/registers.yaml
  localparam logic [OFF_W-1:0] O_TRIGGER  = OFF_W'(rbe_regs_pkg::TRIGGER_OFFSET);
  localparam logic [OFF_W-1:0] O_ACQUIRE  = OFF_W'(rbe_regs_pkg::ACQUIRE_OFFSET);
  localparam logic [OFF_W-1:0] O_FINISHED = OFF_W'(rbe_regs_pkg::FINISHED_OFFSET);
  localparam logic [OFF_W-1:0] O_STATUS   = OFF_W'(rbe_regs_pkg::STATUS_OFFSET);
  localparam logic [OFF_W-1:0] O_RUNNING  = OFF_W'(rbe_regs_pkg::RUNNING_JOB_OFFSET);
  localparam logic [OFF_W-1:0] O_CLEAR    = OFF_W'(rbe_regs_pkg::SOFT_CLEAR_OFFSET);
  localparam logic [OFF_W-1:0] O_JOB      = OFF_W'(rbe_regs_pkg::X_ADDR_OFFSET);
  // STATUS layout from the package; the four sticky error bits are contiguous
  localparam int unsigned STICKY_LSB = rbe_regs_pkg::STATUS_ERR_TRIGGER_NO_JOB_LSB;
  localparam int unsigned S_TRIG = rbe_regs_pkg::STATUS_ERR_TRIGGER_NO_JOB_LSB - STICKY_LSB;
  localparam int unsigned S_WIGN = rbe_regs_pkg::STATUS_ERR_WRITE_IGNORED_LSB - STICKY_LSB;
  localparam int unsigned S_INV  = rbe_regs_pkg::STATUS_ERR_JOB_INVALID_LSB - STICKY_LSB;
  localparam int unsigned S_BAD  = rbe_regs_pkg::STATUS_ERR_BAD_ACCESS_LSB - STICKY_LSB;

  logic [31:0] regs_q   [2][N_JOB];
  logic [1:0]  st_q     [2];
  logic [7:0]  id_q     [2];
  logic        ptr_q, run_ptr_q;
  logic [7:0]  next_id_q, running_id_q, last_err_q;
  logic [31:0] finished_q;
  logic [3:0]  sticky_q;

  // ---------------------------------------------------------------- decode
  logic [OFF_W-1:0] off;
  logic             is_job;
  logic [OFF_W-1:0] job_rel;
  logic [3:0]       job_idx;
  assign off     = add_i[OFF_W-1:0];
  assign job_rel = off - O_JOB;
  assign is_job  = (off >= O_JOB) && (off < O_JOB + OFF_W'(4 * N_JOB)) && (off[1:0] == 2'b00);
  assign job_idx = job_rel[5:2];
  logic unused_add;
  assign unused_add = ^{add_i[31:OFF_W], job_rel[OFF_W-1:6], job_rel[1:0]};

  logic rd, wr;
  assign gnt_o = req_i;
  assign rd    = req_i & wen_i;
  assign wr    = req_i & ~wen_i;

  logic [31:0] bemask;
  assign bemask = {{8{be_i[3]}}, {8{be_i[2]}}, {8{be_i[1]}}, {8{be_i[0]}}};

  logic [31:0] status;
  always_comb begin
    status = '0;
    status[rbe_regs_pkg::STATUS_RUNNING_LSB]  = st_q[run_ptr_q] == RUN;
    status[rbe_regs_pkg::STATUS_QUEUED_LSB]   = (st_q[0] == QUEUED) || (st_q[1] == QUEUED);
    status[rbe_regs_pkg::STATUS_ACQUIRED_LSB] = st_q[ptr_q] == ACQ;
    status[rbe_regs_pkg::STATUS_FULL_LSB]     = st_q[ptr_q] != FREE;
    status[rbe_regs_pkg::STATUS_LAST_ERROR_LSB +: rbe_regs_pkg::STATUS_LAST_ERROR_WIDTH] = last_err_q;
    status[STICKY_LSB +: 4] = sticky_q;
  end

  // engine handshake
  logic pop;
  assign pop     = engine_idle_i && (st_q[run_ptr_q] == QUEUED) && !clear_o && !done_i;
  assign start_o = pop;
  assign clear_o = wr && (off == O_CLEAR);
  for (genvar i = 0; i < N_JOB; i++) begin : g_job
    assign job_o[32*i +: 32] = regs_q[run_ptr_q][i];
  end

  // ---------------------------------------------------------------- read data (comb)
  logic [31:0] rdata;
  logic        acq_ok;
  assign acq_ok = (st_q[ptr_q] == FREE);
  always_comb begin
    rdata = 32'd0;
    unique case (off)
      O_TRIGGER, O_CLEAR: rdata = 32'd0;
      O_ACQUIRE:          rdata = acq_ok ? {24'd0, next_id_q} : 32'hFFFF_FFFF;
      O_FINISHED:         rdata = finished_q;
      O_STATUS:           rdata = status;
      O_RUNNING:          rdata = {24'd0, running_id_q};
      default:            rdata = is_job ? regs_q[ptr_q][job_idx] : 32'd0;
    endcase
  end

  // ---------------------------------------------------------------- state
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_valid_o <= 1'b0;
      r_data_o  <= '0;
      r_id_o    <= '0;
      evt_o     <= 1'b0;
    end else begin
      r_valid_o <= req_i;
      r_id_o    <= req_i ? id_i : r_id_o;
      r_data_o  <= rd ? rdata : 32'd0;
      evt_o     <= done_i && !clear_o;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int c = 0; c < 2; c++) begin
        st_q[c] <= FREE;
        id_q[c] <= '0;
        for (int i = 0; i < N_JOB; i++) regs_q[c][i] <= '0;
      end
      ptr_q        <= 1'b0;
      run_ptr_q    <= 1'b0;
      next_id_q    <= '0;
      running_id_q <= '0;
      last_err_q   <= '0;
      finished_q   <= '0;
      sticky_q     <= '0;
    end else if (clear_o) begin
      for (int c = 0; c < 2; c++) begin
        st_q[c] <= FREE;
        id_q[c] <= '0;
        if (data_i == 32'd0)
          for (int i = 0; i < N_JOB; i++) regs_q[c][i] <= '0;
      end
      ptr_q        <= 1'b0;
      run_ptr_q    <= 1'b0;
      next_id_q    <= '0;
      running_id_q <= '0;
      last_err_q   <= '0;
      finished_q   <= '0;
      sticky_q     <= '0;
    end else begin
      // ---- bus side
      if (rd) begin
        if (off == O_ACQUIRE) begin
          if (acq_ok) begin
            st_q[ptr_q] <= ACQ;
            id_q[ptr_q] <= next_id_q;
            next_id_q   <= next_id_q + 8'd1;
          end
        end else if (!(off inside {O_TRIGGER, O_CLEAR, O_FINISHED, O_STATUS, O_RUNNING}) && !is_job)
          sticky_q[S_BAD] <= 1'b1;
      end
      if (wr) begin
        if (off == O_TRIGGER) begin
          if (st_q[ptr_q] == ACQ) begin
            st_q[ptr_q] <= QUEUED;
            ptr_q       <= ~ptr_q;
          end else sticky_q[S_TRIG] <= 1'b1;
        end else if (off == O_STATUS) begin
          sticky_q <= sticky_q & ~(data_i[STICKY_LSB +: 4] & bemask[STICKY_LSB +: 4]);
        end else if (off inside {O_ACQUIRE, O_FINISHED, O_RUNNING}) begin
          sticky_q[S_BAD] <= 1'b1;
        end else if (is_job) begin
          if (st_q[ptr_q] == ACQ)
            regs_q[ptr_q][job_idx] <= (regs_q[ptr_q][job_idx] & ~bemask) | (data_i & bemask);
          else sticky_q[S_WIGN] <= 1'b1;
        end else sticky_q[S_BAD] <= 1'b1;
      end
      // ---- engine side (touches the context at run_ptr, never the one being acquired)
      if (pop) begin
        st_q[run_ptr_q] <= RUN;
        running_id_q    <= id_q[run_ptr_q];
      end
      if (done_i && st_q[run_ptr_q] == RUN) begin
        st_q[run_ptr_q] <= FREE;
        run_ptr_q       <= ~run_ptr_q;
        finished_q      <= finished_q + 32'd1;
        last_err_q      <= err_i;
        if (err_i != 8'd0) sticky_q[S_INV] <= 1'b1;
      end
    end
  end
endmodule
