//! Bounded waits on several ranks: each rank's progress and health are polled without blocking,
//! so that no wait outlives a rank's fault, an NCCL error or a collective that cannot finish.
use crate::error::{Error, Result};
use std::time::{Duration, Instant};

/// How long a wait on the ranks lasts at most unless
/// [`MultiGpu::with_wait_limit`](super::MultiGpu::with_wait_limit) says otherwise.
///
/// Faults and NCCL errors end a wait at once; the limit only catches silent stalls (a rank in a
/// collective its peers never joined), and a wait it ends aborts every communicator. So it is
/// generous: it bounds everything a wait covers, the work queued on the ranks' default streams
/// included, and the longest single call here is far shorter (reading a whole 141 GB H200
/// takes 30 ms; broadcasting 80 GB through PCIe 4 takes seconds).
pub const DEFAULT_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// How long a wait yields the thread between polls (short collectives return promptly)...
const YIELDING: Duration = Duration::from_millis(10);
/// ...before it sleeps this long between them.
const POLL_PAUSE: Duration = Duration::from_micros(200);

/// Where one rank's awaited work stands.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Progress {
    Done,
    Running,
}

/// Polls `probe(rank)` for each of `ranks` until every one is `Done`. `Error::RankFailed` when
/// a probe fails, naming its rank (a CUDA error first when several fail in one pass: a fault is
/// the usual root cause of its peers' errors), or when `limit` passes with ranks still running,
/// naming the first of them with the cause `Error::TimedOut`.
pub(super) fn poll_ranks(
    ranks: usize,
    limit: Duration,
    mut probe: impl FnMut(usize) -> Result<Progress>,
) -> Result<()> {
    let start = Instant::now();
    let mut running: Vec<usize> = (0..ranks).collect();
    loop {
        let mut failures = Vec::new();
        running.retain(|&rank| match probe(rank) {
            Ok(progress) => progress == Progress::Running,
            Err(cause) => {
                failures.push((rank, cause));
                true
            }
        });
        let root = failures.iter().position(|(_, e)| matches!(e, Error::Cuda { .. })).unwrap_or(0);
        if let Some((rank, cause)) = failures.into_iter().nth(root) {
            return Err(Error::RankFailed { rank, cause: Box::new(cause) });
        }
        let elapsed = start.elapsed();
        match running.first() {
            None => return Ok(()),
            Some(&rank) if elapsed >= limit => {
                return Err(Error::RankFailed { rank, cause: Box::new(Error::TimedOut { limit }) })
            }
            Some(_) if elapsed < YIELDING => std::thread::yield_now(),
            Some(_) => std::thread::sleep(POLL_PAUSE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cust::error::CudaError;

    fn nccl_error() -> Error {
        Error::Nccl { call: "ncclCommGetAsyncError", code: 6, message: "remote error".into() }
    }

    #[test]
    fn ranks_that_finish_end_the_wait() {
        let mut polls = [0usize; 3];
        let finish_after = [1usize, 5, 40];
        poll_ranks(3, Duration::from_secs(5), |r| {
            polls[r] += 1;
            Ok(if polls[r] >= finish_after[r] { Progress::Done } else { Progress::Running })
        })
        .unwrap();
        assert_eq!(polls, finish_after, "a finished rank is not polled again");
    }

    #[test]
    fn a_failing_probe_names_its_rank_and_cause() {
        let cause = Error::Cuda { call: "cuEventQuery", source: CudaError::IllegalAddress };
        let got =
            poll_ranks(3, Duration::from_secs(5), |r| if r == 2 { Err(cause.clone()) } else { Ok(Progress::Running) });
        assert_eq!(got, Err(Error::RankFailed { rank: 2, cause: Box::new(cause) }));
    }

    #[test]
    fn a_cuda_fault_is_named_before_its_peers_nccl_errors() {
        let fault = Error::Cuda { call: "cuEventQuery", source: CudaError::IllegalAddress };
        let got = poll_ranks(3, Duration::from_secs(5), |r| match r {
            1 => Err(fault.clone()),
            _ => Err(nccl_error()),
        });
        assert_eq!(got, Err(Error::RankFailed { rank: 1, cause: Box::new(fault) }));
        let only_nccl = poll_ranks(2, Duration::from_secs(5), |_| Err(nccl_error()));
        assert_eq!(only_nccl, Err(Error::RankFailed { rank: 0, cause: Box::new(nccl_error()) }));
    }

    #[test]
    fn a_rank_that_never_finishes_times_out_at_the_limit() {
        let limit = Duration::from_millis(50);
        let start = Instant::now();
        let got = poll_ranks(3, limit, |r| Ok(if r == 0 { Progress::Done } else { Progress::Running }));
        let waited = start.elapsed();
        assert_eq!(got, Err(Error::RankFailed { rank: 1, cause: Box::new(Error::TimedOut { limit }) }));
        assert!(waited >= limit && waited < limit + Duration::from_secs(2), "waited {:?}", waited);
    }
}
