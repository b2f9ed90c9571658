extension Duration {
    /// The duration in seconds, for arithmetic with the clocks and
    /// timeouts (URLSession's, `poll`'s) that count in `Double` seconds.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
