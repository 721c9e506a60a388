import ArgumentParser
import Logging
import Foundation
import ReelCore
import ReelLoading
import ReelMedia

/// A command-line media argument: a file path or an http(s) URL.
struct MediaSource {
    let url: URL
    let displayName: String

    init(_ argument: String) throws {
        if let url = URL(string: argument), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme) {
            self.url = url
            displayName = argument
        } else if let url = URL(string: argument), url.scheme?.lowercased() == "file" {
            self.url = url
            displayName = url.path
        } else if argument.contains("://") {
            throw CommandFailure.usage("unsupported URL scheme in '\(argument)' (use a file path, file://, http:// or https://)")
        } else {
            let path = (argument as NSString).expandingTildeInPath
            self.url = URL(fileURLWithPath: path)
            displayName = argument
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CommandFailure.media("\(argument): no such file")
            }
            if isDirectory.boolValue {
                throw CommandFailure.usage("\(argument) is a directory; give a media file")
            }
        }
    }

    var isRemote: Bool { !url.isFileURL }
}

/// How bytes are loaded: shared by every command that reads media.
struct LoadingOptions: ParsableArguments {
    func makeLoader(for source: MediaSource) throws -> any ResourceLoader {
        if source.isRemote {
            throw CommandFailure.usage("http(s) URLs need the HTTP loader, which this build does not have yet")
        }
        return FileLoader()
    }
}

/// The one line a user sees for an error.
func describe(_ error: any Error) -> String {
    if let media = error as? MediaError { return media.description }
    if let loader = error as? ResourceLoaderError { return loader.description }
    if let failure = error as? CommandFailure { return failure.message }
    return String(describing: error)
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Flag(name: .long, help: "Log what the engine does (and FFmpeg's own messages) to stderr.")
    var verbose = false

    func apply() {
        FFmpegLog.setVerbose(verbose)
        LogSetup.bootstrap(verbose: verbose)
    }
}
