//! `ackclock-tun`: the live network on a Linux TUN device (see DESIGN.md). Not yet written.
