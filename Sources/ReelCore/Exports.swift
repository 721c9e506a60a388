// ReelCore's users lock with `withTrackedLock` and await with `OneShot`, which live in the
// concurrency toolkit: what imports ReelCore sees them without a second import.
@_exported import ReelThreads
