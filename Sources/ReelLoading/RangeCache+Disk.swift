import Foundation
import Synchronization
import ReelCore
#if canImport(Glibc)
import Glibc
#endif

/// How the index's changes reach the disk, and how the index is rebuilt from it.
///
/// Renames of directories and spans are the index's commit points: they run inside the
/// cache's lock, in the same critical section as the change of the index, so a lookup
/// never names a file that is not where the index says (a rename moves no bytes and
/// syncs nothing). Everything else — `meta.json` (written, synced, renamed), new
/// directories, removing partial files, span bytes and their `fdatasync` — runs outside
/// it; ``diskOrder`` keeps those in the order the index asked for them.
extension RangeCache {
    func directoryPath(area: Area, name: String) -> String {
        root + "/" + area.rawValue + "/" + name
    }

    /// Runs an index event that may touch the disk: the event and its renames under the
    /// lock, then its writes under ``diskOrder`` only, then the reads it wakes.
    @discardableResult
    func change<T: Sendable>(_ event: (inout CacheIndex) -> (T, CacheIndex.Effects)) -> T {
        let (result, woken) = diskOrder.withTrackedLock { _ in
            let (result, writes, woken) = withState { state in
                let (result, effects) = event(&state.index)
                let writes = carryOutRenames(effects.disk, in: &state)
                return (result, writes, takeWaiters(effects.wake, from: &state))
            }
            for write in writes { carryOut(write) }
            return (result, woken)
        }
        woken.forEach { $0.resume() }
        return result
    }

    func takeWaiters(_ ids: [CacheIndex.WaiterID], from state: inout State) -> [CheckedContinuation<Void, Never>] {
        ids.compactMap { state.waiters.removeValue(forKey: $0) }
    }

    /// Moves directories as the index says (lock held); returns the writes left to do.
    private func carryOutRenames(_ changes: [CacheIndex.DiskChange], in state: inout State) -> [CacheIndex.DiskChange] {
        var writes: [CacheIndex.DiskChange] = []
        for change in changes {
            switch change {
            case .moveToTrash(let area, let name):
                moveToTrash(directoryPath(area: area, name: name), name: name)
            case .promote(let id, let name):
                let to = directoryPath(area: .media, name: name)
                if POSIXFile.isDirectory(to) {
                    // A stale directory of the same name (should not happen): it goes first.
                    moveToTrash(to, name: name)
                }
                do {
                    try POSIXFile.rename(directoryPath(area: .temp, name: name), to)
                } catch {
                    logger.warning("cannot move \(state.index.entries[id]?.key ?? name) to media/: \(error)")
                    state.index.promotionFailed(id)
                }
            case .createDirectory, .writeMetadata:
                writes.append(change)
            }
        }
        return writes
    }

    /// Writes metadata (creating the directory first when asked), outside the lock.
    private func carryOut(_ write: CacheIndex.DiskChange) {
        let id: CacheIndex.EntryID, sync: Bool, creating: Bool
        switch write {
        case .createDirectory(let entry): (id, sync, creating) = (entry, configuration.syncWrites, true)
        case .writeMetadata(let entry, let synced): (id, sync, creating) = (entry, synced, false)
        default: return
        }
        // What to write is read now: a later change of the metadata is in it.
        guard let target = withState({ $0.index.metadataToWrite(id, creating: creating) }) else { return }
        let directory = directoryPath(area: target.area, name: target.name)
        do {
            if creating { try POSIXFile.makeDirectory(directory) }
            let path = directory + "/" + CacheLayout.metadataFile
            if let code = configuration.faults?.beforeMetadataWrite() {
                throw POSIXError(call: "write", path: path, code: code)
            }
            try POSIXFile.writeAtomically(try target.metadata.encoded(), to: path, sync: sync)
            if creating { withState { $0.index.directoryCreated(id) } }
        } catch {
            stopStoring(error as? POSIXError ?? POSIXError(call: "write", path: directory, code: EIO))
        }
    }

    func moveToTrash(_ path: String, name: String) {
        let target = root + "/" + CacheLayout.trash + "/" + name + "-" + UUID().uuidString.lowercased()
        do {
            try POSIXFile.rename(path, target)
        } catch {
            // Renaming inside one directory tree only fails if the disk is broken; delete in place.
            POSIXFile.removeTree(path)
        }
    }

    /// Stops caching after a disk failure, with one log line.
    func stopStoring(_ error: POSIXError) {
        guard withState({ $0.index.stopStoring() }) else { return }
        if error.isNoSpace {
            logger.warning("cache disk full (\(error)); caching stopped, playback continues from the network")
        } else {
            logger.warning("cache write failed (\(error)); caching stopped, playback continues from the network")
        }
    }

    // MARK: - Opening: rebuilding the index from disk

    /// Scans `temp/` and `media/`, keeps what can be trusted, discards what a crash left
    /// unfinished and drops (with a warning) what is damaged.
    func recover() {
        sweepEstimateLeftovers()
        var found: [String: CacheIndex.Found] = [:]
        for area in [Area.media, Area.temp] {
            let areaPath = root + "/" + area.rawValue
            for name in POSIXFile.list(areaPath) {
                let path = areaPath + "/" + name
                guard CacheLayout.isDirectoryName(name), POSIXFile.isDirectory(path) else {
                    logger.warning("cache: removing stray \(area.rawValue)/\(name)")
                    moveToTrash(path, name: "stray")
                    continue
                }
                if found[name] != nil {
                    logger.warning("cache: \(name) is in temp/ and media/; keeping media/")
                    moveToTrash(path, name: name)
                    continue
                }
                if let resource = recoverResource(name: name, area: area) { found[name] = resource }
            }
        }
        change { index in ((), index.load(found.keys.sorted().map { found[$0]! })) }
    }

    /// Removes the bandwidth estimate's temporary files whose process is gone (killed between
    /// the write and the rename); a running process's file is being written and stays.
    private func sweepEstimateLeftovers() {
        for name in POSIXFile.list(root) {
            guard let pid = CacheLayout.estimateTemporaryPID(name), !ProcessLock.isRunning(pid) else { continue }
            logger.debug("cache: removing \(name), an estimate its process did not finish writing")
            POSIXFile.unlinkIfPresent(root + "/" + name)
        }
    }

    private func recoverResource(name: String, area: Area) -> CacheIndex.Found? {
        let path = directoryPath(area: area, name: name)
        let scan = DirectoryScan(path: path)
        for unfinished in scan.unfinished { POSIXFile.unlinkIfPresent(path + "/" + unfinished) }
        guard let metadata = scan.metadata else {
            if !scan.spans.isEmpty || !scan.damaged.isEmpty || !scan.strays.isEmpty {
                logger.warning("cache: \(area.rawValue)/\(name) has spans but no readable metadata; removing it")
            }
            moveToTrash(path, name: name)
            return nil
        }
        for file in scan.damaged + scan.strays {
            logger.warning("cache: dropping \(area.rawValue)/\(name)/\(file)")
            POSIXFile.unlinkIfPresent(path + "/" + file)
        }
        for span in scan.rejectedSpans {
            logger.warning("cache: dropping \(area.rawValue)/\(name)/\(span.name) (overlaps or lies past the end)")
            POSIXFile.unlinkIfPresent(path + "/" + span.name)
        }
        var resource = CacheIndex.Found(name: name, area: area, metadata: metadata, spans: scan.spans)
        var probe = CacheEntry(name: name, key: metadata.key, area: area, lastAccess: Date())
        probe.metadata = metadata
        probe.spans = scan.spans
        if area == .media, !probe.isComplete,
           (try? POSIXFile.rename(path, directoryPath(area: .temp, name: name))) != nil {
            resource.area = .temp
        }
        return resource
    }

    /// Re-reads one resource from disk (read-only caches see another process's writes).
    func refreshFromDisk(name: String) {
        for area in [Area.media, Area.temp] {
            let path = directoryPath(area: area, name: name)
            guard POSIXFile.isDirectory(path) else { continue }
            let scan = DirectoryScan(path: path)
            guard let metadata = scan.metadata else { continue }
            let found = CacheIndex.Found(name: name, area: area, metadata: metadata, spans: scan.spans)
            withState { $0.index.refresh(name: name, with: found) }
            return
        }
        withState { $0.index.refresh(name: name, with: nil) }
    }

    func refreshAllFromDisk() {
        var names: Set<String> = []
        for area in [Area.media, Area.temp] {
            for name in POSIXFile.list(root + "/" + area.rawValue) where CacheLayout.isDirectoryName(name) {
                names.insert(name)
            }
        }
        for name in names.sorted() { refreshFromDisk(name: name) }
    }
}

/// What one resource directory holds, sorted into what can be trusted and what cannot.
/// Used by recovery on open, by read-only refreshes, and by ``RangeCache/verify(directory:)``.
struct DirectoryScan {
    var metadata: CacheMetadata?
    /// Whether a `meta.json` exists (readable or not).
    var hasMetadataFile = false
    /// Trusted spans: name parsed, size matches, inside the length, no overlap.
    var spans: [CachedSpan] = []
    /// Spans with a good name and size that overlap others or lie past the end.
    var rejectedSpans: [CachedSpan] = []
    /// Span files whose size differs from their name.
    var damaged: [String] = []
    /// Files left by writes a crash interrupted (`.partial`, `meta.json.tmp`).
    var unfinished: [String] = []
    /// Anything else.
    var strays: [String] = []

    init(path: String) {
        var candidates: [CachedSpan] = []
        for file in POSIXFile.list(path) {
            if file == CacheLayout.metadataFile {
                hasMetadataFile = true
                if let data = FileManager.default.contents(atPath: path + "/" + file) {
                    metadata = CacheMetadata.decode(data)
                }
            } else if file.hasSuffix(CacheLayout.partialExtension) || file == CacheLayout.metadataFile + ".tmp" {
                unfinished.append(file)
            } else if let parsed = CacheLayout.parseSpanName(file) {
                if POSIXFile.size(path + "/" + file) == parsed.length {
                    candidates.append(CachedSpan(offset: parsed.offset, length: parsed.length, digest: parsed.digest))
                } else {
                    damaged.append(file)
                }
            } else {
                strays.append(file)
            }
        }
        candidates.sort { ($0.offset, -$0.length) < ($1.offset, -$1.length) }
        var coveredUpTo: Int64 = 0
        for span in candidates {
            if span.offset < coveredUpTo {
                rejectedSpans.append(span)
            } else if let length = metadata?.length, span.end > length {
                rejectedSpans.append(span)
            } else {
                spans.append(span)
                coveredUpTo = span.end
            }
        }
    }
}

