// The kernel benchmark's workloads in SystemC (Accellera SystemC 2.3/3.0 and TLM-2.0), for
// bench/kernel.py to compare against: the same process structure and counts as its Python
// workloads. One workload per process run (SystemC cannot restart a simulation):
//
//     kernel_bench pingpong_delta N | pingpong_immediate N | timed_waits NPROC K | b_transport N
//     kernel_bench version
//
// prints the wall seconds spent in sc_start() (elaboration excluded), then the final
// simulated time in ps, on one line.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

using namespace sc_core;

// ----- ping-pong over two events ------------------------------------------------------------
SC_MODULE(PingPong) {
    sc_event ping, pong;
    long n;
    bool immediate;

    void a() {
        if (immediate) wait(SC_ZERO_TIME);   // b must be waiting before an immediate notify
        for (long i = 0; i < n; ++i) {
            if (immediate) ping.notify(); else ping.notify(SC_ZERO_TIME);
            wait(pong);
        }
    }
    void b() {
        for (long i = 0; i < n; ++i) {
            wait(ping);
            if (immediate) pong.notify(); else pong.notify(SC_ZERO_TIME);
        }
    }
    SC_HAS_PROCESS(PingPong);
    PingPong(sc_module_name name, long n_, bool immediate_) : sc_module(name), n(n_), immediate(immediate_) {
        SC_THREAD(a);
        SC_THREAD(b);
    }
};

// ----- many processes on timed waits of 1..8 ns -------------------------------------------------
SC_MODULE(Waiters) {
    long k;
    void loop(unsigned seed) {
        uint32_t x = seed * 2654435761u + 1u;   // a small LCG: delays 1..8 ns, as in Python
        for (long i = 0; i < k; ++i) {
            x = x * 1664525u + 1013904223u;
            wait(sc_time(double(1 + (x >> 29)), SC_NS));
        }
    }
    Waiters(sc_module_name name, int nproc, long k_) : sc_module(name), k(k_) {
        for (int i = 0; i < nproc; ++i) {
            sc_spawn_options opt;
            sc_spawn(sc_bind(&Waiters::loop, this, unsigned(i)), sc_gen_unique_name("p"), &opt);
        }
    }
};

// ----- loosely-timed b_transport to a memory ------------------------------------------------------
struct Memory : sc_module {
    tlm_utils::simple_target_socket<Memory> socket;
    std::vector<unsigned char> mem;
    explicit Memory(sc_module_name name) : sc_module(name), socket("socket"), mem(1 << 20) {
        socket.register_b_transport(this, &Memory::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& p, sc_time& delay) {
        uint64_t a = p.get_address();
        unsigned len = p.get_data_length();
        if (p.is_read()) std::memcpy(p.get_data_ptr(), &mem[a], len);
        else std::memcpy(&mem[a], p.get_data_ptr(), len);
        delay += sc_time(10, SC_NS);
        p.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

struct Cpu : sc_module {
    tlm_utils::simple_initiator_socket<Cpu> socket;
    long n;
    SC_HAS_PROCESS(Cpu);
    Cpu(sc_module_name name, long n_) : sc_module(name), socket("socket"), n(n_) { SC_THREAD(run); }
    void run() {
        tlm::tlm_generic_payload p;
        unsigned char buf[8];
        sc_time d = SC_ZERO_TIME;
        for (long i = 0; i < n; ++i) {
            p.set_command(tlm::TLM_READ_COMMAND);
            p.set_address((uint64_t(i) * 8) & 0xFFFF8);
            p.set_data_ptr(buf);
            p.set_data_length(8);
            p.set_streaming_width(8);
            p.set_byte_enable_ptr(nullptr);
            p.set_dmi_allowed(false);
            p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            socket->b_transport(p, d);
        }
        wait(d);
    }
};

int sc_main(int argc, char* argv[]) {
    if (argc == 2 && std::string(argv[1]) == "version") {
        std::printf("SystemC %s\n", sc_release());
        return 0;
    }
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s pingpong_delta|pingpong_immediate|timed_waits|b_transport N [K]\n", argv[0]);
        return 2;
    }
    std::string what = argv[1];
    long n = std::atol(argv[2]);
    if (what == "pingpong_delta" || what == "pingpong_immediate") {
        new PingPong("pp", n, what == "pingpong_immediate");
    } else if (what == "timed_waits") {
        new Waiters("w", int(n), argc > 3 ? std::atol(argv[3]) : 200);
    } else if (what == "b_transport") {
        auto* cpu = new Cpu("cpu", n);
        auto* mem = new Memory("mem");
        cpu->socket.bind(mem->socket);
    } else {
        std::fprintf(stderr, "unknown workload %s\n", what.c_str());
        return 2;
    }
    auto t0 = std::chrono::steady_clock::now();
    sc_start();
    auto t1 = std::chrono::steady_clock::now();
    std::printf("%.9f %llu\n", std::chrono::duration<double>(t1 - t0).count(),
                (unsigned long long)(sc_time_stamp().value() / sc_time(1, SC_PS).value()));
    return 0;
}
