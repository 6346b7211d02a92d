//! Shared by the multi-GPU tests: every visible GPU joined, with an honest skip.
use cudakernels::MultiGpu;
use std::io::Write;

/// Every visible GPU joined, or `None` after the skip line (a failure with REQUIRE_GPU=1).
pub fn multi(test: &str) -> Option<MultiGpu> {
    let required = std::env::var("REQUIRE_GPU").map(|v| v == "1").unwrap_or(false);
    match cudakernels::open_all() {
        Ok(m) => Some(m),
        Err(e) if !required => {
            // Past the test harness's capture, as common::gpu prints its skip line.
            let _ = writeln!(std::io::stderr(), "SKIPPED {}: no CUDA device or no NCCL ({})", test, e);
            None
        }
        Err(e) => panic!("REQUIRE_GPU=1 but the GPUs could not be joined: {}", e),
    }
}
