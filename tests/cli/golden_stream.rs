//! The stream is a contract: the same spec and seed give the same bytes on every
//! machine and every hatshop build of one stream version. These hashes pin it, and the
//! lanes of fixed targets pin the routing. A change to the generator, the catalogues,
//! the state hash, key texts, value bytes or lane routing fails here: make it on purpose,
//! raise `STREAM_VERSION`, and update the values below in the same commit.

use hatshop::runner::lane_of;
use hatshop::workload::{Generator, STREAM_VERSION, kv, presets, write_events};
use sha2::{Digest, Sha256};

/// (preset, sha256 of its stream at seed 42 with 2,000 events, 100 warm-up, and 50
/// initial orders and 300 initial records where the preset has any: what
/// `hatshop generate` writes for the same settings)
const GOLDEN: &[(&str, &str)] = &[
    (
        "hatshop-random",
        "87976ce3630da4a54f02a124cd49e7565c487a5cf331c115f90ca782e6161ec6",
    ),
    (
        "updates",
        "13e44b888b03a88fb582f917f70df84cc5b891fe3424b24c1f64f2bedad55bb4",
    ),
    (
        "creates",
        "27a5788e8bbd9fbe94886e0f1ed0029e6b42fee721cf8629d9f0fcc988ee3cb6",
    ),
    (
        "hot-reads",
        "618805d3694816056cd6536bdee70960d3b05810bcf57a03321e13ffea334dc3",
    ),
    (
        "kv-50w-50r",
        "fff50ffe20f15eeaf240bec2a94bb108064b33410e95faab9b1e62c5b2b83d0a",
    ),
    (
        "kv-10w-40rw-50r",
        "3ad1c2b8ae4e3c5bcfa79928e90689bfbe3f785901da6817cf5c0d226cf00973",
    ),
    (
        "kv-50rw-50r",
        "6385d54bcef467a7d3f8873ce4312cea59eda428819aa8481c1aab622b18fcbe",
    ),
    (
        "kv-90rw-10r",
        "d8e5f67462d9ad384b3168339a1ac8b40003b15a51de9a8eb32b3c6bb022a288",
    ),
    (
        "race-cql-insert",
        "b7f57cfb1a2c371b8283d2960383132212f36f62d97149ad2d9569468a014ba2",
    ),
    (
        "race-cql-read",
        "eb5016e5714ffc7613ef4967ec70cd4f1487866d782341983322c6ce48cd090f",
    ),
    (
        "race-sql-select",
        "9b04d9b062d156e396825534042787853fb4bd3b3d98c0d1cd92418894cd5f8d",
    ),
    (
        "race-sql-insert",
        "109c82347c9173b8606d92153e9fd184621199951e20edc189a7f8df9d3636c1",
    ),
    (
        "race-pg-select",
        "fea1167b16aff678dfd9a213bf2a9e793f2c0ce4ed81ae75f766d6ff553e9006",
    ),
    (
        "race-redis-get",
        "eb5016e5714ffc7613ef4967ec70cd4f1487866d782341983322c6ce48cd090f",
    ),
    (
        "race-redis-set",
        "5a128828dd8f3f5c9508e8cfff882c9d43cccd9c9ce95642b08879ef36e7548f",
    ),
    (
        "race-vold-read",
        "eb5016e5714ffc7613ef4967ec70cd4f1487866d782341983322c6ce48cd090f",
    ),
];

fn stream_sha(name: &str) -> String {
    let mut spec = presets()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no preset {name}"));
    spec.seed = 42;
    spec.events = 2_000;
    spec.warmup = 100;
    if spec.initial_orders > 0 {
        spec.initial_orders = 50;
    }
    if spec.initial_records > 0 {
        spec.initial_records = 300;
    }
    let mut bytes = Vec::new();
    let (_, sha) = write_events(Generator::new(&spec), &mut bytes).unwrap();
    assert_eq!(sha, hex(&Sha256::digest(&bytes)));
    sha
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn every_preset_makes_the_pinned_stream() {
    assert_eq!(
        STREAM_VERSION, 1,
        "a new stream version: update the golden values"
    );
    let names: Vec<String> = presets().into_iter().map(|p| p.name).collect();
    let mut got = Vec::new();
    for name in &names {
        got.push(format!("    (\"{name}\", \"{}\"),", stream_sha(name)));
    }
    let got = got.join("\n");
    let want: Vec<String> = GOLDEN
        .iter()
        .map(|(n, s)| format!("    (\"{n}\", \"{s}\"),"))
        .collect();
    assert_eq!(
        got,
        want.join("\n"),
        "the stream changed; new values:\n{got}"
    );
}

#[test]
fn lanes_of_fixed_targets_are_pinned() {
    let lanes: Vec<usize> = (1..=12u64).map(|id| lane_of(id, 16)).collect();
    assert_eq!(lanes, LANES_OF_1_TO_12, "lane routing changed: {lanes:?}");
    assert_eq!(lane_of(1_000_000, 7), LANE_OF_MILLION_IN_7);
}

const LANES_OF_1_TO_12: [usize; 12] = [1, 14, 13, 10, 10, 0, 7, 6, 4, 10, 13, 3];
const LANE_OF_MILLION_IN_7: usize = 4;

#[test]
fn key_texts_and_values_are_pinned() {
    assert_eq!(kv::KeyText::of(1).as_str(), KEY_1);
    let value = kv::value(1, 2, 64);
    assert_eq!(hex(&Sha256::digest(&value)), VALUE_1_2_64);
}

const KEY_1: &str = "userb456bcfc34c2cb2c";
const VALUE_1_2_64: &str = "d9572d0cdda78d20465b1fcb4f703792c1e7ed7757e7b114fbd0e261fd6619d4";

#[test]
fn order_payloads_are_pinned() {
    let mut spec = presets()
        .into_iter()
        .find(|p| p.name == "hatshop-random")
        .unwrap();
    spec.events = 2_000;
    spec.initial_orders = 50;
    spec.order_bytes = Some(hatshop::workload::OrderBytes {
        min: 200,
        max: 2_000,
    });
    let mut bytes = Vec::new();
    let (_, sha) = write_events(Generator::new(&spec), &mut bytes).unwrap();
    assert_eq!(sha, PAYLOADS_STREAM, "the stream with payloads changed");
    let text = hatshop::workload::payload::text(1, hatshop::workload::Payload::of(64));
    assert_eq!(hex(&Sha256::digest(text.as_bytes())), PAYLOAD_1_64);
}

const PAYLOADS_STREAM: &str = "c7a56736a2dd725ab619b94602d6f27eba2cc148baa60d755e56e71d33d2c47b";
const PAYLOAD_1_64: &str = "95391c3ea8ad1caadeaa2a99577fb57c54e2d871283c0c89b3d4d61761002ada";
