extension Duration {
    /// The duration in seconds, as a `Double` (what a clock in seconds, a `TimeInterval` or a
    /// value machine's time in seconds wants).
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
