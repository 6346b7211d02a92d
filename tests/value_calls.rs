//! Value calls take each call's own result from words tagged with the call's sequence number:
//! results of any bytes (the old "unwritten" pattern 0xa5 included) come back exact without
//! the wait for the stream, back-to-back calls never see an earlier call's result, the round
//! change after `u32::MAX` clears the words, and the kernels publish with single 64-bit
//! system-scope stores (no system fence).
mod common;
use common::{gpu, upload_on, Rng};
use cudakernels::{
    ladder_entry_point, Finish, GpuStream, LadderKernel, ReduceStrategy, TypedOp, LADDER_TYPES, PTX, TYPED_TYPES,
};

/// Rounds of the pattern-valued calls.
const ROUNDS: usize = 1000;

/// Bits whose every byte is 0xa5: what the old slot was filled with before each call.
const PATTERN_32: u32 = 0xa5a5_a5a5;
const PATTERN_64: u64 = 0xa5a5_a5a5_a5a5_a5a5;

/// `n` zeros with `v` at a random place: every summation order gives exactly `v`.
fn lone<T: Copy + Default>(rng: &mut Rng, n: usize, v: T) -> Vec<T> {
    let mut host = vec![T::default(); n];
    host[rng.below(n)] = v;
    host
}

/// Random i32s whose wrapping sum is `target`.
fn summing_to(rng: &mut Rng, n: usize, target: i32) -> Vec<i32> {
    let mut host: Vec<i32> = (0..n).map(|_| rng.next_u64() as i32).collect();
    let rest = host[1..].iter().fold(0i32, |a, &b| a.wrapping_add(b));
    host[0] = target.wrapping_sub(rest);
    host
}

/// Random values in `lo..=hi` with `lo` and `hi` each at a random place.
fn spanning<T: Copy>(rng: &mut Rng, n: usize, lo: T, hi: T, between: impl Fn(f64) -> T) -> Vec<T> {
    let mut host: Vec<T> = (0..n).map(|_| between(rng.unit())).collect();
    let at = rng.below(n);
    host[at] = lo;
    host[(at + 1 + rng.below(n - 1)) % n] = hi;
    host
}

/// One round of value calls whose results' bytes are all 0xa5 (for a minmax, one side's), on
/// inputs uploaded once; returns the number of calls.
fn pattern_rounds(s: &GpuStream, rng: &mut Rng, rounds: usize, what: &str) -> usize {
    let n = 4096;
    let (f32_pattern, f64_pattern) = (f32::from_bits(PATTERN_32), f64::from_bits(PATTERN_64));
    let (i32_pattern, u16_pattern) = (PATTERN_32 as i32, PATTERN_32 as u16);
    let ints = upload_on(s, &summing_to(rng, n, i32_pattern));
    let floats = upload_on(s, &lone(rng, n, f32_pattern));
    let doubles = upload_on(s, &lone(rng, n, f64_pattern));
    let bytes = upload_on(s, &vec![0xa5u8; n]);
    let lows = upload_on(s, &spanning(rng, n, i32_pattern, 7, |u| i32_pattern + 1 + (u * 1e9) as i32));
    let highs = upload_on(s, &spanning(rng, n, 3, u16_pattern, |u| 3 + (u * 40000.0) as u16));
    let mut calls = 0;
    let mut check = |ok: bool, call: &str, round: usize| {
        assert!(ok, "{} round {}: {} is not the pattern-valued result", what, round, call);
        calls += 1;
    };
    for round in 0..rounds {
        check(s.reduce_sum(&ints, ReduceStrategy::Auto).unwrap() == i32_pattern, "reduce_sum i32", round);
        check(s.reduce_sum(&floats, ReduceStrategy::Auto).unwrap().to_bits() == PATTERN_32, "reduce_sum f32", round);
        check(s.sum(&floats).unwrap().to_bits() == PATTERN_32, "sum f32", round);
        check(s.sum(&doubles).unwrap().to_bits() == PATTERN_64, "sum f64", round);
        let (lo, hi) = s.minmax(&doubles).unwrap();
        check((lo.to_bits(), hi.to_bits()) == (PATTERN_64, 0), "minmax f64", round);
        check(s.minmax(&bytes).unwrap() == (0xa5, 0xa5), "minmax u8", round);
        check(s.minmax(&lows).unwrap() == (i32_pattern, 7), "minmax i32", round);
        check(s.max(&highs).unwrap() == u16_pattern, "max u16", round);
        check(s.min(&floats).unwrap().to_bits() == PATTERN_32, "min f32", round);
    }
    calls
}

#[test]
fn results_whose_bytes_are_the_old_pattern_come_back_exact_without_waiting_for_the_stream() {
    let gpu = match gpu("results_whose_bytes_are_the_old_pattern_come_back_exact_without_waiting_for_the_stream") {
        Some(g) => g,
        None => return,
    };
    let s = gpu.new_stream().unwrap();
    let mut rng = Rng::fresh("pattern_values");
    let what = format!("seed {}", rng.seed);
    // A first round loads every kernel (lazy loading may take longer than the spin).
    pattern_rounds(&s, &mut rng, 1, &what);
    let before = s.value_fallbacks();
    let calls = pattern_rounds(&s, &mut rng, ROUNDS, &what);
    let fallbacks = s.value_fallbacks() - before;
    eprintln!("{}: {} of {} pattern-valued calls waited for the stream", what, fallbacks, calls);
    // The old slot sent every one of these calls to the wait. A call may still reach it when
    // its thread is descheduled or its launch is slow past the 20 µs spin, which no test can
    // rule out on a shared machine: at most one in a hundred.
    assert!(fallbacks <= calls / 100, "{}: {} of {} calls waited for the stream", what, fallbacks, calls);
}

/// Every strategy a value call takes its result by: the tagged words from a one-block and a
/// many-block `Flagged`, `LastBlock` and second-pass finish, the copied device slot (`Atomic`).
fn strategies() -> [ReduceStrategy; 5] {
    let ladder = |finish| ReduceStrategy::Ladder { kernel: LadderKernel::Vectorized, finish, block: 256, grain: 1 };
    [
        ReduceStrategy::Auto,
        ladder(Finish::Flagged),
        ladder(Finish::LastBlock),
        ladder(Finish::SecondPass),
        ladder(Finish::Atomic),
    ]
}

#[test]
fn back_to_back_value_calls_each_return_their_own_result() {
    let gpu = match gpu("back_to_back_value_calls_each_return_their_own_result") {
        Some(g) => g,
        None => return,
    };
    let s = gpu.new_stream().unwrap();
    let mut rng = Rng::fresh("back_to_back");
    // Inputs of 1 to 20000 elements (1 to 20 blocks of 256 threads at grain 1), each with its
    // own sums and extremes.
    let hosts: Vec<Vec<i32>> =
        (0..48).map(|_| (0..1 + rng.below(20_000)).map(|_| rng.next_u64() as i32).collect()).collect();
    let doubles: Vec<Vec<f64>> = hosts.iter().map(|h| h.iter().map(|&v| v as f64 * 0.25).collect()).collect();
    let devs: Vec<_> = hosts.iter().map(|h| upload_on(&s, h)).collect();
    let dev_doubles: Vec<_> = doubles.iter().map(|h| upload_on(&s, h)).collect();
    for call in 0..3000 {
        let k = rng.below(hosts.len());
        let (h, d) = (&hosts[k], &devs[k]);
        let what = format!("seed {} call {} input {} (n {})", rng.seed, call, k, h.len());
        let lo_hi = (*h.iter().min().unwrap(), *h.iter().max().unwrap());
        // Calls of 1, 2 and 4 tagged words, and of every finish, in a random mix.
        match call % 5 {
            0 => {
                let strategy = strategies()[rng.below(5)];
                let want = h.iter().fold(0i32, |a, &b| a.wrapping_add(b));
                assert_eq!(s.reduce_sum(d, strategy).unwrap(), want, "{} {:?}", what, strategy);
            }
            1 => assert_eq!(s.sum(d).unwrap(), h.iter().map(|&v| v as i64).sum::<i64>(), "{} sum", what),
            2 => assert_eq!(s.minmax(d).unwrap(), lo_hi, "{} minmax", what),
            3 => {
                let want = (lo_hi.0 as f64 * 0.25, lo_hi.1 as f64 * 0.25);
                assert_eq!(s.minmax(&dev_doubles[k]).unwrap(), want, "{} minmax f64", what);
            }
            _ => assert_eq!(s.max(d).unwrap(), lo_hi.1, "{} max", what),
        }
    }
}

#[test]
fn the_round_after_u32_max_does_not_take_the_last_rounds_words() {
    let gpu = match gpu("the_round_after_u32_max_does_not_take_the_last_rounds_words") {
        Some(g) => g,
        None => return,
    };
    let up = gpu.default_stream();
    let (first, second) = (upload_on(up, &[1.5f64, -2.5, 7.0]), upload_on(up, &[-9.0f64, 4.0]));
    for round in 0..3 {
        // The stream's first call takes number 1 and leaves it in all four words; after
        // u32::MAX the next call takes 1 again, and must not find the old words.
        let s = gpu.new_stream().unwrap();
        assert_eq!(s.minmax(&first).unwrap(), (-2.5, 7.0), "round {}", round);
        s.set_last_value_sequence(u32::MAX).unwrap();
        assert_eq!(s.minmax(&second).unwrap(), (-9.0, 4.0), "round {}: the words of number 1 were taken", round);
        s.set_last_value_sequence(u32::MAX - 2).unwrap();
        for k in 0..6 {
            let want = if k % 2 == 0 { (-2.5, 7.0) } else { (-9.0, 4.0) };
            assert_eq!(
                s.minmax(if k % 2 == 0 { &first } else { &second }).unwrap(),
                want,
                "round {} call {}",
                round,
                k
            );
        }
    }
}

/// The body of entry point `name` in the PTX: from its `.entry` line to the next one.
fn entry_body(name: &str) -> &'static str {
    let head = format!("{}(", name);
    PTX.split(".entry ").find(|body| body.starts_with(&head)).unwrap_or_else(|| panic!("{} is not in the PTX", name))
}

#[test]
fn kernels_publish_value_results_with_64_bit_system_stores_and_no_system_fence() {
    let mut names: Vec<String> = LADDER_TYPES.iter().map(|t| format!("reduce_finish_{}", t)).collect();
    for &kernel in LadderKernel::ALL.iter() {
        names.push(ladder_entry_point::<f32>(kernel, 256));
        names.push(ladder_entry_point::<i32>(kernel, 1024));
    }
    for op in TypedOp::ALL.iter() {
        names.extend(TYPED_TYPES.iter().map(|t| format!("{}_{}", op.name(), t)));
    }
    names.push("sum_f32_f64acc".into());
    for name in &names {
        let body = entry_body(name);
        assert!(body.contains("st.relaxed.sys.global.u64"), "{} publishes no tagged word", name);
    }
    // A system-scope fence or release would cost every value call a MEMBAR.SYS.
    for slow in ["fence.sc.sys", "fence.acq_rel.sys", "membar.sys", ".release.sys"].iter() {
        assert!(!PTX.contains(slow), "the PTX has {}", slow);
    }
}
