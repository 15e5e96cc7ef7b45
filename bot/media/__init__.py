"""Photos and documents people send: what kind a file is, its text, its chunks, a smaller
image; pure functions over bytes, run in a child process by `MediaReader`."""
