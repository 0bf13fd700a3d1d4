//! `ackclock-sim`: the deterministic discrete-event network (see DESIGN.md). Not yet
//! written.
