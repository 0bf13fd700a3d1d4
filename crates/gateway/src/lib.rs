//! `ackclock-gateway`: links, loss models and queue disciplines (see DESIGN.md). Not yet
//! written.
