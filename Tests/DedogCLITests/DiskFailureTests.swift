import Foundation
import Testing
import DedogTestSupport

/// Writing to a disk that is full, read-only or past the process's file size limit gives a clear error, leaves
/// the previous model as it was and no temporary file behind.
@Suite struct DiskFailureTests {
    static let previous = "the previous model, which must survive"

    static func train(_ data: SyntheticDataset, output: String, extra: [String] = []) -> [String] {
        ["train", data.root.path, "--output", output, "--no-cache", "--val-fraction", "0.25", "--epochs", "3",
         "--threads", "2"] + extra
    }

    /// Whether this process may make a private mount namespace (root with CAP_SYS_ADMIN), where a tiny tmpfs
    /// stands in for a full disk and a read-only remount for a read-only one.
    static let canMount: Bool = {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "/bin/sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Runs dedog in a private mount namespace with a tmpfs of `size` at `folder`, holding the previous model;
    /// `readOnly` remounts it read-only first. The script reports on stderr what it finds afterwards.
    static func runOnTmpfs(folder: URL, size: String, readOnly: Bool, arguments: (String) -> [String]) throws -> CLI.Result {
        let script = """
            set -e
            mount -t tmpfs -o size=\(size) tmpfs "$DIR"
            printf '%s' "\(previous)" > "$DIR/model.safetensors"
            if [ "$READONLY" = 1 ]; then mount -o remount,ro "$DIR"; fi
            set +e
            "$@"
            status=$?
            echo "left: $(ls -A "$DIR" | tr '\\n' ' ')" >&2
            if [ "$(cat "$DIR/model.safetensors")" = "\(previous)" ]; then echo "previous model intact" >&2; fi
            exit $status
            """
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return try CLI.run(arguments(folder.appendingPathComponent("model.safetensors").path),
                           environment: ["DIR": folder.path, "READONLY": readOnly ? "1" : "0"],
                           launcher: ["/usr/bin/unshare", "-m", "/bin/bash", "-c", script, "bash"])
    }

    @Test(.enabled(if: canMount, "needs root with CAP_SYS_ADMIN for a private tmpfs (a full disk stand-in)"))
    func fullDiskKeepsThePreviousModel() throws {
        let data = try SyntheticDataset(name: "full-disk")
        defer { data.remove() }
        let r = try Self.runOnTmpfs(folder: data.root.appendingPathComponent("disk"), size: "1m", readOnly: false) {
            Self.train(data, output: $0)
        }
        #expect(!r.signalled)
        #expect(r.status == 1)
        #expect(r.stderr.contains("model.safetensors: cannot write the model file (the disk is full; free some space); "
                                  + "the previous file, if any, is untouched."), "\(r.stderr)")
        #expect(r.stderr.contains("left: model.safetensors \n"), "no temporary file is left: \(r.stderr)")
        #expect(r.stderr.contains("previous model intact"))
    }

    @Test(.enabled(if: canMount, "needs root with CAP_SYS_ADMIN for a private read-only mount"))
    func readOnlyDiskIsRefusedBeforeTheWork() throws {
        let data = try SyntheticDataset(name: "read-only")
        defer { data.remove() }
        let r = try Self.runOnTmpfs(folder: data.root.appendingPathComponent("disk"), size: "1m", readOnly: true) {
            Self.train(data, output: $0)
        }
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot write the model file (the file system is read-only; write somewhere else)"),
                "\(r.stderr)")
        #expect(!r.stdout.contains("Trained on"), "refused before extracting features: \(r.stdout)")
        #expect(r.stderr.contains("previous model intact"))
    }

    @Test(.enabled(if: canMount, "needs root with CAP_SYS_ADMIN for a private tmpfs (a full disk stand-in)"))
    func fullCacheDiskOnlyCostsTheCache() throws {
        let data = try SyntheticDataset(name: "full-cache")
        defer { data.remove() }
        let output = data.root.appendingPathComponent("model.safetensors").path
        let r = try Self.runOnTmpfs(folder: data.root.appendingPathComponent("disk"), size: "64k", readOnly: false) { disk in
            let cache = URL(fileURLWithPath: disk).deletingLastPathComponent().appendingPathComponent("cache").path
            return Self.train(data, output: output).filter { $0 != "--no-cache" } + ["--cache", cache]
        }
        #expect(r.stderr.contains("warning: the feature cache stopped storing ("), "\(r.stderr)")
        #expect(r.stderr.contains("the disk is full"), "\(r.stderr)")
        #expect(r.stdout.contains("Model written to \(output)"), "\(r.stdout)")
    }

    /// Runs everywhere: the file size limit (`ulimit -f`) makes the model write fail with EFBIG.
    @Test func fileSizeLimitKeepsThePreviousModel() throws {
        let data = try SyntheticDataset(name: "size-limit")
        defer { data.remove() }
        let output = data.root.appendingPathComponent("out/model.safetensors")
        try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(Self.previous.utf8).write(to: output)
        let r = try CLI.run(Self.train(data, output: output.path),
                            launcher: ["/bin/bash", "-c", "ulimit -f 4096; exec \"$@\"", "bash"])
        #expect(!r.signalled, "SIGXFSZ must not kill dedog")
        #expect(r.status == 1)
        #expect(r.stderr.contains("cannot write the model file (the file size limit of this process (ulimit -f) was reached)"),
                "\(r.stderr)")
        #expect(try Data(contentsOf: output) == Data(Self.previous.utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: output.deletingLastPathComponent().path) == ["model.safetensors"])
    }
}
