"""Claude Code's own numbers that hookgate's engine must respect (handed to it through
hookgate.runtimes; the engine never imports this)."""

# Claude Code ends a turn by itself after this many consecutive Stop blocks; a stop gate's own
# bound must release first, so the release is recorded and explained instead of silent.
STOP_BLOCK_CAP = 8
