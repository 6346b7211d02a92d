//! With the `from-source` feature: compiles the `kernels` crate to PTX with rustc_codegen_nvvm,
//! then the PTX to SASS cubins with `ptxas`, all into OUT_DIR, where `src/images.rs` embeds them.
//! Without it (the default) there is nothing to build: the crate embeds the committed images in
//! `kernels/images/`, so it builds on any stable toolchain.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "from-source")]
    from_source::build();
}

#[cfg(feature = "from-source")]
mod from_source {
    use cuda_builder::{CudaBuilder, NvvmArch};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    include!("kernels/src/grid_wait_config.rs");

    /// The SASS targets, as in `src/images.rs` (compiled from the one compute_80 PTX).
    const CUBIN_ARCHES: [u32; 2] = [80, 90];

    pub fn build() {
        println!("cargo:rerun-if-changed=kernels/src");
        println!("cargo:rerun-if-changed=kernels/Cargo.toml");
        println!("cargo:rerun-if-env-changed=PTXAS");
        let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
        let ptx = out.join("kernels.ptx");
        // Compute80 is the newest arch nvvm 0.1.1 knows; ptxas and the driver take it further.
        if let Err(e) = CudaBuilder::new("kernels").arch(NvvmArch::Compute80).copy_to(&ptx).build() {
            panic!("building the kernels to PTX failed: {:?}", e);
        }
        let ptxas = ptxas();
        let with_waits = out.join(format!("kernels.sm_{}.ptx", GRID_WAIT_MIN_SM));
        std::fs::write(&with_waits, waiting_ptx(&std::fs::read_to_string(&ptx).expect("reading the PTX")))
            .expect("writing the PTX with grid waits");
        let jobs: Vec<_> = CUBIN_ARCHES
            .iter()
            .map(|&sm| {
                let source = if sm >= GRID_WAIT_MIN_SM { with_waits.clone() } else { ptx.clone() };
                let (ptxas, cubin) = (ptxas.clone(), out.join(format!("kernels.sm_{}.cubin", sm)));
                std::thread::spawn(move || assemble(&ptxas, &source, sm, &cubin))
            })
            .collect();
        for job in jobs {
            job.join().expect("a ptxas thread panicked");
        }
    }

    /// The PTX for `GRID_WAIT_MIN_SM` and later: every entry point's `GRID_WAIT_MARKER` comment
    /// made the instruction, which needs `.target sm_90`. Panics unless each entry point has
    /// exactly one marker (`tests/ptx.rs` checks where it sits).
    fn waiting_ptx(ptx: &str) -> String {
        let (entries, markers) = (ptx.matches(".entry ").count(), ptx.matches(GRID_WAIT_MARKER).count());
        assert_eq!(markers, entries, "{} entry points but {} grid-wait markers", entries, markers);
        let target = ".target sm_80\n";
        assert_eq!(ptx.matches(target).count(), 1, "the PTX does not target sm_80");
        ptx.replace(target, &format!(".target sm_{}\n", GRID_WAIT_MIN_SM))
            .replace(GRID_WAIT_MARKER, GRID_WAIT_INSTRUCTION)
    }

    /// `$PTXAS` (setup pins CUDA 12.9's, which the committed cubins come from), else `ptxas`.
    fn ptxas() -> PathBuf {
        std::env::var_os("PTXAS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("ptxas"))
    }

    fn assemble(ptxas: &Path, ptx: &Path, sm: u32, cubin: &Path) {
        let status = Command::new(ptxas)
            .arg(format!("-arch=sm_{}", sm))
            .arg(ptx)
            .arg("-o")
            .arg(cubin)
            .status()
            .unwrap_or_else(|e| panic!("could not run {}: {}", ptxas.display(), e));
        assert!(status.success(), "{} -arch=sm_{} failed ({})", ptxas.display(), sm, status);
    }
}
