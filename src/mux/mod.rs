//! Multiplexers behind one trait (to be written)
