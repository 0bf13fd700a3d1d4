//! The RPC client's bookkeeping is per event, not per request outstanding: a digest of 120
//! runs over random paths and configurations (every timer, rate control, arrival process,
//! 1 to 300 requests outstanding, loss and queue overflow) must equal the one recorded with
//! the client that scanned every outstanding request on each event
//! (`tests/rpc_equivalence.digest`). `ACKCLOCK_BLESS=1` rewrites the digest after a change
//! of behaviour made on purpose.

mod harness;

use ackclock_dgram::rpc::{
    rpc_rtt_config, Arrivals, RateControl, RpcClient, RpcClientConfig, RpcServer, Timer,
};
use ackclock_wire::{Duration, Instant};
use harness::{Direction, Path, SERVER};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

fn one_run(seed: u64) -> String {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    let rate = [1e5, 1e6, 1e7][r.random_range(0..3)];
    let delay = Duration::from_millis(r.random_range(1..100));
    let limit = r.random_range(2..60);
    let loss = [0.0, 0.01, 0.05, 0.2][r.random_range(0..4)];
    let mut p = Path::new(
        Direction::new(rate, delay, limit, loss),
        Direction::new(rate, delay, limit, loss / 2.0),
        seed,
    );
    let timer = if r.random_bool(0.5) {
        Timer::Adaptive(rpc_rtt_config())
    } else {
        Timer::Fixed(Duration::from_millis(r.random_range(50..900)))
    };
    let rate_control =
        [RateControl::None, RateControl::Aimd, RateControl::Tfrc][r.random_range(0..3)];
    let arrivals = if r.random_bool(0.5) {
        Arrivals::Closed
    } else {
        Arrivals::Poisson {
            per_sec: r.random_range(1.0..400.0),
            backlog: r.random_range(1..500),
        }
    };
    let outstanding = [1, 2, 4, 16, 300][r.random_range(0..5)];
    let cfg = RpcClientConfig {
        outstanding,
        timer,
        rate: rate_control,
        arrivals,
        requests: Some(r.random_range(1..3000)),
        max_transmissions: r.random_range(1..6),
        seed,
        ..RpcClientConfig::nfs(SERVER)
    };
    let mut c = RpcClient::new(cfg);
    let mut s = RpcServer::new(Duration::from_micros(r.random_range(0..3000)), 200, 65507);
    p.run(&mut c, &mut s, Instant::ZERO + Duration::from_secs(20));
    format!(
        "{seed}: {:?} finished {:?} srtt {:?} rate {:?} server {:?} wire {} {} {} {} polls {}",
        c.stats(),
        c.finished_at(),
        c.srtt(),
        c.rate().map(|x| x.to_bits()),
        s.stats(),
        p.forward.delivered,
        p.forward.dropped,
        p.reverse.delivered,
        p.reverse.dropped,
        p.polls
    )
}

#[test]
fn the_rpc_client_behaves_as_the_client_that_scanned_every_request() {
    let mut text = String::new();
    for seed in 0..120 {
        writeln!(text, "{}", one_run(seed)).unwrap();
    }
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rpc_equivalence.digest");
    if std::env::var_os("ACKCLOCK_BLESS").is_some() {
        std::fs::write(&file, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&file).expect("the recorded digest");
    for (i, (got, want)) in text.lines().zip(want.lines()).enumerate() {
        assert_eq!(got, want, "run {i} differs");
    }
    assert_eq!(text.lines().count(), want.lines().count());
}
