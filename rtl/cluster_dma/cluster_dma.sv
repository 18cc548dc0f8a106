// Cluster DMA (MCHAN-style): the RTL of components/cluster_dma.py.
//
// Same registers, command word, ID lifecycle, checks and error behaviour as the model
// (docs/memory.md "Cluster DMA", docs/rtl.md "Cluster DMA RTL"); simpler engine: one
// transfer and one burst at a time, store and forward through a burst buffer.
//
// Ports:
//   periph_*  PULP HWPE peripheral target (req/gnt/add/wen(1=read)/be/data/id ->
//             r_data/r_valid/r_id one cycle after the grant); window add[9:0]
//   m_axi_*   AXI4 master, 64-bit data, 32-bit address, L2 side (IDs 0, INCR bursts)
//   tcdm_*    TCDM master, 2 x 32-bit ports (packed: port i = bits [32*i +: 32] of
//             add/data, [4*i +: 4] of be, [i] of req/gnt/wen/r_valid), port i at beat + 4i
//   evt_o     completion event of transfers with EVT_EN (to the Event Unit)
//   irq_o     completion or failure of transfers with IRQ_EN
//   err_o     every failed or dropped command
//   busy_o    a command is decoded, queued or running
// Events are one-cycle pulses, one per event, at least one idle cycle apart.
module cluster_dma #(
  parameter int unsigned ID_W            = 8,
  parameter int unsigned QUEUE_DEPTH     = 16,             // transfer IDs (1..32)
  parameter logic [31:0] L2_BASE         = 32'h1C00_0000,  // l2_private.base
  parameter logic [31:0] L2_END          = 32'h1C10_0000,  // l2.end
  parameter logic [31:0] TCDM_BASE       = 32'h1000_0000,
  parameter logic [31:0] TCDM_SIZE       = 32'h0002_0000,
  parameter int unsigned MAX_BURST_BEATS = 256,            // 8-byte beats per burst (<= 256)
  parameter int unsigned PAGE_BYTES      = 4096            // burst boundary (<= 4096)
) (
  input  logic            clk_i,
  input  logic            rst_ni,
  // configuration port
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
  // AXI4 master (L2 side)
  output logic [0:0]      m_axi_awid,
  output logic [31:0]     m_axi_awaddr,
  output logic [7:0]      m_axi_awlen,
  output logic [2:0]      m_axi_awsize,
  output logic [1:0]      m_axi_awburst,
  output logic [2:0]      m_axi_awprot,
  output logic            m_axi_awvalid,
  input  logic            m_axi_awready,
  output logic [63:0]     m_axi_wdata,
  output logic [7:0]      m_axi_wstrb,
  output logic            m_axi_wlast,
  output logic            m_axi_wvalid,
  input  logic            m_axi_wready,
  input  logic [0:0]      m_axi_bid,
  input  logic [1:0]      m_axi_bresp,
  input  logic            m_axi_bvalid,
  output logic            m_axi_bready,
  output logic [0:0]      m_axi_arid,
  output logic [31:0]     m_axi_araddr,
  output logic [7:0]      m_axi_arlen,
  output logic [2:0]      m_axi_arsize,
  output logic [1:0]      m_axi_arburst,
  output logic [2:0]      m_axi_arprot,
  output logic            m_axi_arvalid,
  input  logic            m_axi_arready,
  input  logic [0:0]      m_axi_rid,
  input  logic [63:0]     m_axi_rdata,
  input  logic [1:0]      m_axi_rresp,
  input  logic            m_axi_rlast,
  input  logic            m_axi_rvalid,
  output logic            m_axi_rready,
  // TCDM master (2 x 32-bit)
  output logic [1:0]      tcdm_req_o,
  input  logic [1:0]      tcdm_gnt_i,
  output logic [63:0]     tcdm_add_o,
  output logic [1:0]      tcdm_wen_o,
  output logic [7:0]      tcdm_be_o,
  output logic [63:0]     tcdm_data_o,
  input  logic [63:0]     tcdm_r_data_i,
  input  logic [1:0]      tcdm_r_valid_i,
  // events
  output logic            evt_o,
  output logic            irq_o,
  output logic            err_o,
  output logic            busy_o
);
  logic        cmd_valid, cmd_to_tcdm, eng_done, eng_bus_err, eng_ack, regs_busy, eng_busy;
  logic [31:0] cmd_l2, cmd_tcdm, cmd_l2_step, cmd_tcdm_step;
  logic [17:0] cmd_row_bytes;
  logic [15:0] cmd_rows;

  cluster_dma_regs #(
    .ID_W(ID_W), .QUEUE_DEPTH(QUEUE_DEPTH), .L2_BASE(L2_BASE), .L2_END(L2_END),
    .TCDM_BASE(TCDM_BASE), .TCDM_SIZE(TCDM_SIZE)
  ) i_regs (
    .clk_i, .rst_ni,
    .req_i(periph_req_i), .gnt_o(periph_gnt_o), .add_i(periph_add_i), .wen_i(periph_wen_i),
    .be_i(periph_be_i), .data_i(periph_data_i), .id_i(periph_id_i),
    .r_data_o(periph_r_data_o), .r_valid_o(periph_r_valid_o), .r_id_o(periph_r_id_o),
    .cmd_valid_o(cmd_valid), .cmd_l2_o(cmd_l2), .cmd_tcdm_o(cmd_tcdm),
    .cmd_row_bytes_o(cmd_row_bytes), .cmd_rows_o(cmd_rows), .cmd_l2_step_o(cmd_l2_step),
    .cmd_tcdm_step_o(cmd_tcdm_step), .cmd_to_tcdm_o(cmd_to_tcdm),
    .eng_done_i(eng_done), .eng_bus_err_i(eng_bus_err), .eng_ack_o(eng_ack),
    .evt_o, .irq_o, .err_o, .busy_o(regs_busy)
  );

  cluster_dma_engine #(
    .MAX_BURST_BEATS(MAX_BURST_BEATS), .PAGE_BYTES(PAGE_BYTES)
  ) i_engine (
    .clk_i, .rst_ni,
    .cmd_valid_i(cmd_valid), .cmd_l2_i(cmd_l2), .cmd_tcdm_i(cmd_tcdm),
    .cmd_row_bytes_i(cmd_row_bytes), .cmd_rows_i(cmd_rows), .cmd_l2_step_i(cmd_l2_step),
    .cmd_tcdm_step_i(cmd_tcdm_step), .cmd_to_tcdm_i(cmd_to_tcdm),
    .done_o(eng_done), .bus_err_o(eng_bus_err), .ack_i(eng_ack), .busy_o(eng_busy),
    .awaddr_o(m_axi_awaddr), .awlen_o(m_axi_awlen), .awvalid_o(m_axi_awvalid),
    .awready_i(m_axi_awready), .wdata_o(m_axi_wdata), .wstrb_o(m_axi_wstrb),
    .wlast_o(m_axi_wlast), .wvalid_o(m_axi_wvalid), .wready_i(m_axi_wready),
    .bresp_i(m_axi_bresp), .bvalid_i(m_axi_bvalid), .bready_o(m_axi_bready),
    .araddr_o(m_axi_araddr), .arlen_o(m_axi_arlen), .arvalid_o(m_axi_arvalid),
    .arready_i(m_axi_arready), .rdata_i(m_axi_rdata), .rresp_i(m_axi_rresp),
    .rvalid_i(m_axi_rvalid), .rready_o(m_axi_rready),
    .tcdm_req_o, .tcdm_gnt_i, .tcdm_add_o, .tcdm_wen_o, .tcdm_be_o, .tcdm_data_o,
    .tcdm_r_data_i, .tcdm_r_valid_i
  );

  assign m_axi_awid    = 1'b0;
  assign m_axi_awsize  = 3'd3;     // 8-byte beats
  assign m_axi_awburst = 2'b01;    // INCR
  assign m_axi_awprot  = 3'b000;
  assign m_axi_arid    = 1'b0;
  assign m_axi_arsize  = 3'd3;
  assign m_axi_arburst = 2'b01;
  assign m_axi_arprot  = 3'b000;
  assign busy_o        = regs_busy | eng_busy;

  // IDs are always 0 (one burst in flight); RLAST is implied by the beat count
  logic unused;
  assign unused = ^{m_axi_bid, m_axi_rid, m_axi_rlast};
endmodule
