import ArgumentParser
import Foundation
import ReelCore
import ReelLoading

/// `reel cache stats|verify|clear|fetch`: look at, check, empty or fill the range cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect, verify, clear or fill the range cache.",
        discussion: "The cache lives in $XDG_CACHE_HOME/reel (or ~/.cache/reel) unless --cache-dir says otherwise.",
        subcommands: [Stats.self, Verify.self, Clear.self, Fetch.self]
    )
}

/// Options every cache subcommand takes.
struct CacheDirectoryOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "The cache directory.")
    var cacheDirectory: String?

    @Flag(help: "Log what happens.")
    var verbose = false

    var directory: URL {
        cacheDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? RangeCache.defaultDirectory()
    }

    func validate() throws {
        if let cacheDirectory, cacheDirectory.isEmpty { throw ValidationError("--cache-dir must not be empty") }
    }
}

extension CacheCommand {
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show what the cache holds.")

        @OptionGroup var options: CacheDirectoryOptions

        func run() async throws {
            CommandLogging.bootstrap(verbose: options.verbose)
            let report = RangeCache.inspect(directory: options.directory, verifyContents: false)
            print("cache      \(report.directory)")
            print("resources  \(report.resources) (\(report.completeResources) complete)")
            print("spans      \(report.spans)")
            print("temp/      \(byteText(report.tempBytes))")
            print("media/     \(byteText(report.mediaBytes))")
            print("trash/     \(report.trashEntries) entries")
            if report.isInUse {
                print("in use by  \(report.writerPID.map { "pid \($0)" } ?? "another process")")
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-read every span and check it against its recorded length and MD5.",
            discussion: "Exits 0 when the cache is clean, 3 when something is corrupt or does not belong."
        )

        @OptionGroup var options: CacheDirectoryOptions

        func run() async throws {
            CommandLogging.bootstrap(verbose: options.verbose)
            let report = RangeCache.inspect(directory: options.directory, verifyContents: true)
            for problem in report.problems { print(problem) }
            if report.isInUse {
                print("note: in use by \(report.writerPID.map { "pid \($0)" } ?? "another process"); files being written were skipped")
            }
            let checked = "\(report.resources) resources, \(report.spans) spans, \(byteText(report.tempBytes + report.mediaBytes))"
            let unfinished = report.unfinishedWrites > 0 ? "; \(report.unfinishedWrites) unfinished writes to discard on next open" : ""
            guard report.isClean else {
                throw CommandFailure.media("cache \(report.directory): \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") in \(checked)")
            }
            print("clean: \(checked)\(unfinished)")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete everything in the cache.")

        @OptionGroup var options: CacheDirectoryOptions

        func run() async throws {
            CommandLogging.bootstrap(verbose: options.verbose)
            let cache: RangeCache
            do {
                cache = try RangeCache(configuration: .init(directory: options.directory, access: .exclusive))
            } catch {
                throw CommandFailure.media("\(error)")
            }
            let before = cache.statistics
            cache.removeAll()
            cache.purgeTrash()
            cache.close()
            print("cleared \(before.resources) resources, \(byteText(before.tempBytes + before.mediaBytes))")
        }
    }

    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a resource through the cache.",
            discussion: "Prints how many bytes came from the cache and how many from the network."
        )

        @Argument(help: "The http(s) URL to fetch.")
        var url: String

        @Option(name: [.short, .long], help: "Write the bytes to this file.")
        var output: String?

        @OptionGroup var options: CacheDirectoryOptions

        func validate() throws {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", parsed.host != nil else {
                throw ValidationError("'\(url)' is not an http or https URL")
            }
        }

        func run() async throws {
            CommandLogging.bootstrap(verbose: options.verbose)
            let resource = URL(string: url)!
            let cache: RangeCache
            do {
                cache = try RangeCache(configuration: .init(directory: options.directory))
            } catch {
                throw CommandFailure.media("\(error)")
            }
            let http = HTTPLoader()
            let loader = CachingLoader(upstream: http, cache: cache)
            var file: FileHandle?
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil),
                      let handle = FileHandle(forWritingAtPath: output) else {
                    await http.shutdown()
                    throw CommandFailure.usage("\(output): cannot create the file")
                }
                file = handle
            }
            var total: Int64 = 0
            do {
                let stream = loader.read(resource, range: .all)
                for try await chunk in stream {
                    try file?.write(contentsOf: chunk)
                    total += Int64(chunk.count)
                }
                try file?.close()
            } catch {
                // A failed fetch leaves no partial file behind to be mistaken for the resource.
                try? file?.close()
                if let output { try? FileManager.default.removeItem(atPath: output) }
                await http.shutdown()
                cache.close()
                throw error
            }
            await http.shutdown()
            cache.close()
            let stats = loader.statistics
            print("\(total) bytes: \(stats.bytesFromCache) from cache, \(stats.bytesFromNetwork) from network, \(stats.networkRequests) requests")
        }
    }
}

/// `1.2 MB`, `340 kB`, `12 bytes`.
func byteText(_ bytes: Int64) -> String {
    switch bytes {
    case ..<1000: return "\(bytes) bytes"
    case ..<1_000_000: return String(format: "%.1f kB", Double(bytes) / 1000)
    case ..<1_000_000_000: return String(format: "%.1f MB", Double(bytes) / 1_000_000)
    default: return String(format: "%.2f GB", Double(bytes) / 1_000_000_000)
    }
}
