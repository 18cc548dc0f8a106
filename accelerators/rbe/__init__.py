"""The RBE family: MARSELLUS's reconfigurable binary engine, 2-8 bit convolutions (docs/rbe.md)."""
