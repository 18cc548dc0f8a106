// RBE top: HWPE controller (rbe_regs) + engine (rbe_engine).
//
// Ports follow the PULP conventions of the open RBE:
//   periph_*  HWPE peripheral (config) target: req/gnt/add/wen(1=read)/be/data/id,
//             r_data/r_valid/r_id one cycle later
//   tcdm_*    9 x 32-bit TCDM master ports issued together (port i at base + 4*i),
//             packed vectors: port i is bits [32*i +: 32] (add/data), [4*i +: 4] (be), [i]
//   evt_o     end-of-job event (one-cycle pulse per finished job, also for rejected jobs)
//   busy_o    the engine runs a job
module rbe_top #(
  parameter int unsigned ID_W      = 8,
  parameter logic [31:0] TCDM_BASE = 32'h1000_0000,
  parameter logic [31:0] TCDM_SIZE = 32'h0002_0000
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  input  logic            periph_req_i,
  output logic            periph_gnt_o,
  input  logic [31:0]     periph_add_i,
  input  logic            periph_wen_i,
  input  logic [3:0]      periph_be_i,
  input  logic [31:0]     periph_data_i,
  input  logic [ID_W-1:0] periph_id_i,
  output logic [31:0]     periph_r_data_o,
  output logic            periph_r_valid_o,
  output logic [ID_W-1:0] periph_r_id_o,
  output logic [8:0]      tcdm_req_o,
  input  logic [8:0]      tcdm_gnt_i,
  output logic [287:0]    tcdm_add_o,
  output logic [8:0]      tcdm_wen_o,
  output logic [35:0]     tcdm_be_o,
  output logic [287:0]    tcdm_data_o,
  input  logic [287:0]    tcdm_r_data_i,
  input  logic [8:0]      tcdm_r_valid_i,
  output logic            evt_o,
  output logic            busy_o
);
  localparam int unsigned N_JOB = 12;
  logic              idle, start, clear, done;
  logic [7:0]        err;
  logic [32*N_JOB-1:0] job;

  rbe_regs #(.ID_W(ID_W), .OFF_W(10), .N_JOB(N_JOB)) i_regs (
    .clk_i, .rst_ni,
    .req_i(periph_req_i), .gnt_o(periph_gnt_o), .add_i(periph_add_i), .wen_i(periph_wen_i),
    .be_i(periph_be_i), .data_i(periph_data_i), .id_i(periph_id_i),
    .r_data_o(periph_r_data_o), .r_valid_o(periph_r_valid_o), .r_id_o(periph_r_id_o),
    .engine_idle_i(idle), .start_o(start), .clear_o(clear), .job_o(job),
    .done_i(done), .err_i(err), .evt_o
  );

  rbe_engine #(.N_JOB(N_JOB), .TCDM_BASE(TCDM_BASE), .TCDM_SIZE(TCDM_SIZE)) i_engine (
    .clk_i, .rst_ni, .start_i(start), .clear_i(clear), .job_i(job), .idle_o(idle),
    .done_o(done), .err_o(err),
    .tcdm_req_o, .tcdm_gnt_i, .tcdm_add_o, .tcdm_wen_o, .tcdm_be_o, .tcdm_data_o,
    .tcdm_r_data_i, .tcdm_r_valid_i
  );

  assign busy_o = ~idle;
endmodule
