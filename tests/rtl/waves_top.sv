// Two counters under one top: what a waveform window and scope select (tests/test_rtl_waves.py)
module waves_cnt (
    input  logic       clk_i,
    input  logic       rst_ni,
    output logic [7:0] count_o
);
    always_ff @(posedge clk_i or negedge rst_ni)
        if (!rst_ni) count_o <= '0;
        else         count_o <= count_o + 8'd1;
endmodule

module waves_top (
    input  logic       clk_i,
    input  logic       rst_ni,
    output logic [7:0] a_o,
    output logic [7:0] b_o
);
    waves_cnt u_a (.clk_i, .rst_ni, .count_o(a_o));
    waves_cnt u_b (.clk_i, .rst_ni, .count_o(b_o));
endmodule
