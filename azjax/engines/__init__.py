"""The agent as a game engine: UCI (chess), USI (shogi) and GTP (Go) over stdin and stdout."""
