# The ackclock command in a container image: the image of the Kubernetes Indexed Job that
# `ackclock sweep plan --emit k8s` writes (k8s-job.yaml), usable on any container platform.
#
#   docker build -t ackclock:0.1.0 .
#   docker run --rm -v "$PWD/sw:/sweep/sw" -w /sweep/sw ackclock:0.1.0 ackclock sweep run . --index 0
#
# A sweep is byte-identical across machines when they run the same binary: run a plan's
# runs and its local comparison with the same image.

# Build: the release binary, without the debug information the repository's release
# profile keeps for profiling (it would triple the image).
FROM rust:1-slim-bookworm AS build
WORKDIR /src
COPY . .
ENV CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=true
# No .git in the build: `ackclock repro` reports the commit given here (else "unknown"),
# e.g. --build-arg ACKCLOCK_COMMIT=$(git rev-parse --short HEAD).
ARG ACKCLOCK_COMMIT=
RUN cargo build --release --locked -p ackclock

# Run: the binary on the Debian release it was built on (the same glibc).
FROM debian:bookworm-slim
COPY --from=build /src/target/release/ackclock /usr/local/bin/ackclock
WORKDIR /sweep
CMD ["ackclock", "--help"]
