import Foundation
import DedogFiles

/// How much memory this process can still take: the smaller of the machine's available memory and what its
/// control group (a container's limit) leaves. Used for the default `--max-memory` of train and evaluate.
public enum SystemMemory {
    /// Bytes, or nil when the system does not say.
    public static var available: Int? {
        let machine = meminfo("MemAvailable")
        let group = cgroupRemaining()
        switch (machine, group) {
        case let (m?, g?): return min(m, g)
        case let (m, g): return m ?? g
        }
    }

    static func meminfo(_ key: String) -> Int? {
        guard let bytes = try? FileReader.read("/proc/meminfo", limit: 1 << 20) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix(key + ":") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let kb = Int(fields[1]) else { return nil }
            return kb * 1024
        }
        return nil
    }

    /// The control group's limit minus its working set, if it has a limit (cgroup v2, else v1). The working set
    /// leaves out inactive file cache, which the kernel reclaims before it kills anyone (as `kubectl top` counts):
    /// after reading a large dataset, the group's usage is mostly such cache.
    public static func cgroupRemaining(membership: String = "/proc/self/cgroup", mount: String = "/sys/fs/cgroup") -> Int? {
        func text(_ path: String) -> String? {
            (try? FileReader.read(path, limit: 1 << 16)).map { String(decoding: $0, as: UTF8.self) }
        }
        func number(_ path: String) -> Int? {
            text(path).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        func stat(_ folder: String, _ key: String) -> Int? {
            text(folder + "/memory.stat")?.split(separator: "\n").first { $0.hasPrefix(key + " ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") }
        }
        guard let groups = text(membership) else { return nil }
        let lines = groups.split(separator: "\n")
        // "0::/group" (v2) or "4:memory:/group" (v1). In a container the mount may already be the group itself.
        let candidates: [(folder: String, limit: String, usage: String, inactiveFile: String)] =
            lines.filter { $0.hasPrefix("0::") }.flatMap { line in
                [mount + line.dropFirst(3), mount]
                    .map { ($0, "memory.max", "memory.current", "inactive_file") }
            } + lines.filter { $0.contains(":memory:") }.flatMap { line in
                let group = line.split(separator: ":", maxSplits: 2).last.map(String.init) ?? "/"
                return [mount + "/memory" + group, mount + "/memory"]
                    .map { ($0, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file") }
            }
        for c in candidates {
            // "max" (v2) is not a number; v1 says "no limit" with a value near 2^63.
            guard let limit = number(c.folder + "/" + c.limit) else { continue }
            guard limit < 1 << 60 else { return nil }
            let usage = number(c.folder + "/" + c.usage) ?? 0
            let workingSet = max(0, usage - (stat(c.folder, c.inactiveFile) ?? 0))
            return max(0, limit - workingSet)
        }
        return nil
    }
}
