"""MARSELLUS: platform-level facts (memory map) and composition."""
