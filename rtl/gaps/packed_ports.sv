// Ports of every packed shape a third-party block uses: multi-dimensional packed arrays,
// a packed struct, an array of structs, an event vector (for the port-map width tests).
package packed_ports_pkg;
  typedef struct packed {
    logic [31:0] add;
    logic [3:0]  be;
    logic        wen;
  } req_t;
endpackage

module packed_ports #(
  parameter int MP = 9
) (
  input  logic                      clk_i,
  input  logic [MP-1:0][31:0]       bus_i,
  input  packed_ports_pkg::req_t    req_i,
  input  packed_ports_pkg::req_t [1:0] reqs_i,
  output logic [1:0][2:0][3:0]      cube_o,
  output logic [15:0]               evt_o,
  output logic                      one_o
);
  assign evt_o  = bus_i[0][15:0];
  assign cube_o = {2{req_i.add[11:0]}};
  assign one_o  = req_i.wen ^ reqs_i[1].wen;
endmodule
