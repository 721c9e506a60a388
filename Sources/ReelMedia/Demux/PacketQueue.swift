import ReelCore

/// Demuxed packets waiting for a decoder, each stamped with the seek generation
/// (serial) it belongs to — ffplay's design: a seek bumps the serial and stale
/// entries are dropped by comparison. A `nil` packet marks the end of input.
struct PacketQueue {
    struct Entry {
        var packet: Packet?
        var serial: Int
        var duration: MediaTime
    }

    private(set) var entries: [Entry] = []
    private var head = 0
    private(set) var bytes = 0
    private(set) var duration: MediaTime = .zero

    var count: Int { entries.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func push(_ packet: Packet?, serial: Int, duration: MediaTime) {
        entries.append(Entry(packet: packet, serial: serial, duration: duration))
        bytes += packet?.size ?? 0
        if duration.isNumeric { self.duration = self.duration + duration }
    }

    mutating func pop() -> Entry? {
        guard head < entries.count else { return nil }
        let entry = entries[head]
        entries[head].packet = nil
        head += 1
        bytes -= entry.packet?.size ?? 0
        if entry.duration.isNumeric { duration = duration - entry.duration }
        if head > 64 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        if isEmpty { duration = .zero; bytes = 0 }
        return entry
    }

    /// Moves every queued entry to `serial` (a scrub's decode-on: the packets stay, the
    /// generation moves on).
    mutating func restamp(_ serial: Int) {
        for i in head..<entries.count { entries[i].serial = serial }
    }

    mutating func removeAll() {
        entries = []
        head = 0
        bytes = 0
        duration = .zero
    }
}
