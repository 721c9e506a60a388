/// Test support for Reel: fakes that pass the same contract tests as the real
/// implementations, the contract suites themselves, and fixture factories.
public enum ReelTestSupport {}
