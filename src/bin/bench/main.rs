//! Benchmark: the reduction ladder, the typed reductions and sgemv, timed with CUDA events
//! (median after warm-up), cold memory by rotating buffers larger than L2, and a
//! device-to-device copy as the bandwidth reference. Prints markdown tables.
//! Usage: `bench [--ptx | --cubin FILE] [value|ladder|auto|tuning|typed|arg|sgemv|shapes|batched|hgemv|plans|multi|axis|axis-tuning|axis-folded|axis-short|axis-rows-tuning]...` (all by
//! default). With `BENCH_CSV_DIR` set, the ladder and shapes sections also append their rows to
//! CSV files there; `BENCH_GEMV_SHAPE=BATCHxMxN` keeps one shape of the batched and hgemv sections;
//! `BENCH_TIMING=synced` waits for each timed call before the next, `BENCH_TIMING=chained` queues
//! 20 calls between each pair of events (`timing::median_ms`).
//! Peers (torch.sum, torch.aminmax, torch.argmax, torch.mv) come from scripts/torch_peers.py in the same call.
//! One file per section; `harness` holds what they share, `timing` the event timing.
mod arg;
mod auto;
mod axis;
mod axis_tuning;
mod batched;
mod gemv_check;
mod harness;
mod ladder;
mod multi;
mod plans;
mod sgemv;
mod shapes;
mod timing;
mod tuning;
mod typed;
mod value;

/// data/gemv_shapes.csv, shared with the peers.
#[path = "../../gemv_shapes.rs"]
mod gemv_shapes;

/// data/sgemv_shapes.csv, shared with the tests.
#[path = "../../sgemv_shapes.rs"]
mod sgemv_shapes;

/// data/axis_shapes.csv, shared with the tests.
#[path = "../../axis_shapes.rs"]
mod axis_shapes;

use cudakernels::{open_with, Cubin, Gpu, ImageChoice, KernelImages, LaunchOverlap, Result};

/// A section: the device and the 1 GiB copy's GB/s in, its tables printed.
type Section = fn(&Gpu, f64) -> Result<()>;
const SECTIONS: [(&str, Section); 17] = [
    ("value", value::run),
    ("ladder", ladder::run),
    ("auto", auto::run),
    ("tuning", tuning::run),
    ("typed", typed::run),
    ("arg", arg::run),
    ("sgemv", sgemv::run),
    ("shapes", shapes::run),
    ("batched", batched::run),
    ("hgemv", batched::run_half),
    ("plans", plans::run),
    ("multi", multi::run),
    ("axis", axis::run),
    ("axis-tuning", axis_tuning::run),
    ("axis-folded", axis_tuning::run_folded),
    ("axis-short", axis_tuning::run_short),
    ("axis-rows-tuning", axis_tuning::run_rows),
];

/// Opens device 0 with the SASS in the cubin file `path` (to compare assemblers).
fn open_cubin_file(path: &str) -> Result<Gpu> {
    let image: &'static [u8] = Box::leak(std::fs::read(path).expect("reading the cubin").into_boxed_slice());
    let sm = Cubin::arch_of(image).expect("a cubin");
    let cubins: &'static [Cubin] = Box::leak(Box::new([Cubin { sm, image }]));
    Gpu::new(Box::leak(Box::new(KernelImages { ptx: cudakernels::PTX, cubins })), 0, ImageChoice::Auto)
}

/// The command line: (`--ptx`, `--cubin FILE`, the sections named). Exits 2 on an unknown section.
fn parse_args() -> (bool, Option<String>, Vec<String>) {
    let mut wanted: Vec<String> = std::env::args().skip(1).collect();
    let ptx = wanted.iter().any(|w| w == "--ptx");
    wanted.retain(|w| w != "--ptx");
    let cubin = wanted.iter().position(|w| w == "--cubin").map(|i| {
        wanted.remove(i);
        wanted.remove(i)
    });
    if let Some(bad) = wanted.iter().find(|w| !SECTIONS.iter().any(|(name, _)| name == w)) {
        eprintln!(
            "error: unknown section {:?}; sections are {:?}",
            bad,
            SECTIONS.iter().map(|s| s.0).collect::<Vec<_>>()
        );
        std::process::exit(2);
    }
    (ptx, cubin, wanted)
}

/// `bench [--ptx | --cubin FILE] [SECTION...]`: the named sections (all by default) after the
/// copy reference. `--ptx` loads the PTX (compiled by the driver) instead of the device's
/// cubin; `--cubin FILE` loads the SASS in FILE. `BENCH_LAUNCH_OVERLAP=serial` launches each
/// kernel of the default stream after the one ahead of it has finished (`LaunchOverlap::Serial`).
fn main() {
    let (ptx, cubin, wanted) = parse_args();
    let opened = match &cubin {
        Some(path) => open_cubin_file(path),
        None => open_with(0, if ptx { ImageChoice::Ptx } else { ImageChoice::Auto }),
    };
    let gpu = match opened {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: the benchmark needs a CUDA device: {}", e);
            std::process::exit(1);
        }
    };
    let s = gpu.default_stream();
    if std::env::var("BENCH_LAUNCH_OVERLAP").map(|v| v == "serial").unwrap_or(false) {
        s.set_launch_overlap(LaunchOverlap::Serial);
    }
    println!(
        "## Benchmark on {} ({} SMs, L2 {} MiB), kernels: {:?}, launches overlap: {}",
        s.name(),
        s.sm_count(),
        s.l2_bytes() >> 20,
        s.image(),
        s.launches_overlap()
    );
    let result = harness::copy_bandwidth(s).and_then(|bw| {
        SECTIONS
            .iter()
            .filter(|(name, _)| wanted.is_empty() || wanted.iter().any(|w| w == name))
            .try_for_each(|(_, section)| section(&gpu, bw))
    });
    if let Err(e) = result {
        eprintln!("error: {}", e);
        std::process::exit(1);
    }
}
