//! drivelink-blocks: the block library.
