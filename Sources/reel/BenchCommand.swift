import ArgumentParser

/// `reel bench …`: first-frame, playback (and swipe) benchmarks, each measured against
/// plain FFmpeg in the same run.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure first-frame latency and playback throughput against plain FFmpeg, in one run.",
        discussion: """
            Every figure is printed beside the same measurement of FFmpeg made in the same run \
            (interleaved run by run, on the same origin), and beside the goal it is held to. \
            The goals are targets to read, not pass/fail checks.
            """,
        subcommands: [BenchFirstFrameCommand.self, BenchPlaybackCommand.self, BenchStartCommand.self, BenchSwipeCommand.self,
                      BenchAdaptiveCommand.self, BenchLiveCommand.self, BenchTerminalCommand.self, BenchScrubCommand.self]
    )
}
