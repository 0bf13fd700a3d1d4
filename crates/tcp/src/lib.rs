//! `ackclock-tcp`: the sans-IO TCP engine (see DESIGN.md). Not yet written; the engine
//! is its own issue and builds on `ackclock-wire`.
