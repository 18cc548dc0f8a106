// Adaptive Body Biasing (ABB) controller FSM.
//
// RTL of the PMU model's controller, cycle for cycle: components/pmu/abb.py (AbbFsm, the
// reference it is verified against) and docs/power.md. Clocked by the always-on reference
// clock; on every rising edge it samples
//   en_i          1: automatic (pre-error driven) mode; 0: manual mode
//   pre_error_i   at least one OCM pre-error since the previous edge (OR of all OCMs)
//   active_i      the monitored logic ran since the previous edge (quiet-window enable)
//   manual_code_i bias code to go to in manual mode (clamped to MAX_CODE)
//   load_i        operating-point preset: before this edge's step, load code = target =
//                 load_code_i (clamped to MAX_CODE), MONITOR, timer = quiet = 0 (counters
//                 and sat unchanged); the step below then runs from the loaded registers
//                 (AbbFsm.load followed by AbbFsm.step)
// and drives code_o (forward body bias = code * VBB_STEP, the generator's DAC), state_o
// (0 MONITOR, 1 RAISE, 2 RELAX), busy_o (state != MONITOR), sat_o (sticky: a pre-error at
// MAX_CODE) and the statistics counters of the model. On each edge, in this order:
//   RAISE:   timer -= 1; at 0: code = target, MONITOR, quiet = 0 (pre-errors ignored)
//   RELAX:   en & pre_error: abort and raise from code (as in MONITOR); else timer -= 1,
//            at 0: code = target, MONITOR, quiet = 0
//   MONITOR, en = 0: quiet = 0; manual != code: target = manual, RAISE (higher) or RELAX,
//            timer = RAISE_CYCLES / RELAX_CYCLES
//   MONITOR, en = 1, pre_error: quiet = 0; code < MAX: target = min(code + RAISE_CODES,
//            MAX), RAISE, timer = RAISE_CYCLES; else sat = 1
//   MONITOR, en = 1, no pre-error, code > 0, (active | RELAX_WHEN_IDLE): quiet += 1; at
//            QUIET_CYCLES: target = max(code - RELAX_CODES, 0), RELAX, timer =
//            RELAX_CYCLES, quiet = 0
// Defaults = components/pmu/abb.yaml at the 100 MHz reference clock (0.66 us, 20 us).
module abb_ctrl #(
  parameter int unsigned MAX_CODE        = 24,
  parameter int unsigned RAISE_CODES     = 1,
  parameter int unsigned RELAX_CODES     = 1,
  parameter int unsigned RAISE_CYCLES    = 66,
  parameter int unsigned RELAX_CYCLES    = 66,
  parameter int unsigned QUIET_CYCLES    = 2000,
  parameter bit          RELAX_WHEN_IDLE = 1'b0,
  parameter int unsigned TW              = 16,   // timer width
  parameter int unsigned QW              = 24    // quiet counter width
) (
  input  logic          clk_i,
  input  logic          rst_ni,
  input  logic          en_i,
  input  logic          pre_error_i,
  input  logic          active_i,
  input  logic [4:0]    manual_code_i,
  input  logic          load_i,
  input  logic [4:0]    load_code_i,
  output logic [4:0]    code_o,
  output logic [4:0]    target_o,
  output logic [1:0]    state_o,
  output logic [TW-1:0] timer_o,
  output logic [QW-1:0] quiet_o,
  output logic          busy_o,
  output logic          sat_o,
  output logic [31:0]   pre_errors_o,
  output logic [31:0]   raises_o,
  output logic [31:0]   relaxes_o,
  output logic [31:0]   saturations_o
);
  localparam logic [1:0] MONITOR = 2'd0, RAISE = 2'd1, RELAX = 2'd2;
  localparam logic [5:0] MAXC = 6'(MAX_CODE);

  logic [1:0]    st_q;
  logic [4:0]    code_q, target_q;
  logic [TW-1:0] timer_q;
  logic [QW-1:0] quiet_q;
  logic          sat_q;
  logic [31:0]   n_pre_q, n_raise_q, n_relax_q, n_sat_q;

  // the registers this edge's step starts from: as they are, or as loaded by a preset
  logic [5:0]    lcode;
  logic [1:0]    st_c;
  logic [4:0]    code_c, target_c;
  logic [TW-1:0] timer_c;
  logic [QW-1:0] quiet_c;
  assign lcode    = ({1'b0, load_code_i} > MAXC) ? MAXC : {1'b0, load_code_i};
  assign st_c     = load_i ? MONITOR : st_q;
  assign code_c   = load_i ? lcode[4:0] : code_q;
  assign target_c = load_i ? lcode[4:0] : target_q;
  assign timer_c  = load_i ? '0 : timer_q;
  assign quiet_c  = load_i ? '0 : quiet_q;

  // targets of a raise / relax / manual move from the present code
  logic [5:0] up, down, manual;
  assign up     = ({1'b0, code_c} + 6'(RAISE_CODES) > MAXC) ? MAXC : {1'b0, code_c} + 6'(RAISE_CODES);
  assign down   = ({1'b0, code_c} > 6'(RELAX_CODES)) ? {1'b0, code_c} - 6'(RELAX_CODES) : 6'd0;
  assign manual = ({1'b0, manual_code_i} > MAXC) ? MAXC : {1'b0, manual_code_i};
  logic unused_msb;  // up/down/manual/lcode are clamped to MAX_CODE < 32: bit 5 is always 0
  assign unused_msb = up[5] ^ down[5] ^ lcode[5];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      st_q      <= MONITOR;
      code_q    <= '0;
      target_q  <= '0;
      timer_q   <= '0;
      quiet_q   <= '0;
      sat_q     <= 1'b0;
      n_pre_q   <= '0;
      n_raise_q <= '0;
      n_relax_q <= '0;
      n_sat_q   <= '0;
    end else begin
      // hold (or take the loaded values); the step below overrides what it changes
      st_q     <= st_c;
      code_q   <= code_c;
      target_q <= target_c;
      timer_q  <= timer_c;
      quiet_q  <= quiet_c;
      if (pre_error_i) n_pre_q <= n_pre_q + 32'd1;
      unique case (st_c)
        RAISE, RELAX: begin
          if (st_c == RELAX && en_i && pre_error_i) begin
            // abort the relaxation and raise from the present code
            quiet_q <= '0;
            if ({1'b0, code_c} < MAXC) begin
              target_q  <= up[4:0];
              st_q      <= RAISE;
              timer_q   <= TW'(RAISE_CYCLES);
              n_raise_q <= n_raise_q + 32'd1;
            end else begin
              st_q    <= MONITOR;
              sat_q   <= 1'b1;
              n_sat_q <= n_sat_q + 32'd1;
            end
          end else if (timer_c == TW'(1)) begin
            timer_q <= '0;
            code_q  <= target_c;
            st_q    <= MONITOR;
            quiet_q <= '0;
          end else begin
            timer_q <= timer_c - TW'(1);
          end
        end
        default: begin  // MONITOR
          if (!en_i) begin
            quiet_q <= '0;
            if (manual != {1'b0, code_c}) begin
              target_q <= manual[4:0];
              if (manual > {1'b0, code_c}) begin
                st_q <= RAISE; timer_q <= TW'(RAISE_CYCLES); n_raise_q <= n_raise_q + 32'd1;
              end else begin
                st_q <= RELAX; timer_q <= TW'(RELAX_CYCLES); n_relax_q <= n_relax_q + 32'd1;
              end
            end
          end else if (pre_error_i) begin
            quiet_q <= '0;
            if ({1'b0, code_c} < MAXC) begin
              target_q  <= up[4:0];
              st_q      <= RAISE;
              timer_q   <= TW'(RAISE_CYCLES);
              n_raise_q <= n_raise_q + 32'd1;
            end else begin
              sat_q   <= 1'b1;
              n_sat_q <= n_sat_q + 32'd1;
            end
          end else if (code_c != '0 && (active_i || RELAX_WHEN_IDLE)) begin
            if (quiet_c + QW'(1) >= QW'(QUIET_CYCLES)) begin
              quiet_q   <= '0;
              target_q  <= down[4:0];
              st_q      <= RELAX;
              timer_q   <= TW'(RELAX_CYCLES);
              n_relax_q <= n_relax_q + 32'd1;
            end else begin
              quiet_q <= quiet_c + QW'(1);
            end
          end
        end
      endcase
    end
  end

  assign code_o        = code_q;
  assign target_o      = target_q;
  assign state_o       = st_q;
  assign timer_o       = timer_q;
  assign quiet_o       = quiet_q;
  assign busy_o        = (st_q != MONITOR);
  assign sat_o         = sat_q;
  assign pre_errors_o  = n_pre_q;
  assign raises_o      = n_raise_q;
  assign relaxes_o     = n_relax_q;
  assign saturations_o = n_sat_q;
endmodule
