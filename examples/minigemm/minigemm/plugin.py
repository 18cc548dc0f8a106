"""MiniGEMM's declaration: the entry points ``tlm_cosim.accelerators: minigemm`` (block
type, GEMM unit, subcommand) and ``tlm_cosim.platforms: minigemm`` (a standalone platform
composed in YAML). Nothing here imports more than tlm-cosim's registry."""
from components.plugins import AcceleratorFamily, PlatformEntry

FAMILY = AcceleratorFamily.declare(
    "minigemm", "MiniGEMM: example output-stationary integer GEMM array (a plug-in outside tlm-cosim)",
    docs="examples/minigemm/README.md",
    block_types={"minigemm": "minigemm.blocks:MINIGEMM"},
    units={"minigemm": "minigemm.unit:MiniGemmUnit"},
    commands={"minigemm": ("minigemm.cli:add_parser", "minigemm.cli:run")},
)

PLATFORM = PlatformEntry(doc="MiniGEMM standalone: task host, crossbar, SRAM, one 4x4 MiniGEMM (example plug-in)",
                         file="minigemm:platform.yaml")
