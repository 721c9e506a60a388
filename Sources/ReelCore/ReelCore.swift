/// Reel's pure core: time, ranges, clocks, the resource-loader protocol and the
/// player's state machines. It knows no C library and starts no thread.
public enum ReelCore {
    /// The engine's version, printed by `reel version` and `reel --version`; the newest
    /// heading of CHANGELOG.md names it (`ChangelogTests`).
    public static let version = "0.2.0"
}
