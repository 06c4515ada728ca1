import Foundation

/// The one input layer: every command reads the tool's own documents (results files, noise
/// profiles, machines, run folders, conformance verdicts) through it; a detect request and
/// package-benchmark's threshold files are read where they are used. A name given on the
/// command line is a file, or a results folder meaning its `latest.json` (a noise profile's
/// folder: its `noise.json`); each file is read and checked (its schema and shape, errors naming
/// the file and the problem); several are combined by `merge --combine`'s rule; and the defaults,
/// the noise profile a command was not given and the run a report compares with, are found here,
/// once. Nothing else calls a file reader (``ResultsFile/read(_:)``, ``NoiseProfile/read(_:)``,
/// ``MachineFingerprint/read(from:)``, ``RunFolder/read(_:)``, ``ConformanceVerdict/read(_:)``):
/// a test says so.
public enum Inputs {
    /// The file `name` means: itself, or a folder's `latest.json`.
    public static func url(_ name: String) -> URL {
        url(name, inFolder: "latest.json")
    }

    /// The results file `name` names (a folder: its `latest.json`), read and checked.
    public static func results(_ name: String) throws -> ResultsFile {
        try ResultsFile.read(url(name))
    }

    /// The results file at `url`, read and checked (a file a command made itself: a piece of the
    /// gate's work, a run of `ab`).
    public static func results(at url: URL) throws -> ResultsFile {
        try ResultsFile.read(url)
    }

    /// The results files `names` name, as ``combined(_:names:acrossBuilds:)`` takes them: one
    /// file as it is, several combined by `merge --combine`'s rule (each row, profile and path
    /// measured once; across builds when asked), a refusal naming the files.
    public static func combined(_ names: [String], acrossBuilds: Bool) throws -> ResultsFile {
        try combined(names.map(results), names: names, acrossBuilds: acrossBuilds)
    }

    /// `files` (read through this layer) as one: one file as it is, several combined.
    public static func combined(_ files: [ResultsFile], names: [String], acrossBuilds: Bool) throws -> ResultsFile {
        files.count == 1 ? files[0] : try ResultsFile.combined(files, names: names, acrossBuilds: acrossBuilds)
    }

    /// The machine of the file `name` names, read alone (a file of a newer schema still says it).
    public static func machine(_ name: String) throws -> MachineFingerprint {
        try MachineFingerprint.read(from: url(name))
    }

    /// The noise profile `name` names: a file, or a folder's `noise.json`.
    public static func noiseProfile(_ name: String) throws -> NoiseProfile {
        try NoiseProfile.read(url(name, inFolder: "noise.json"))
    }

    /// The file ``noiseProfile(_:)`` reads for `name`, as given (a folder's: its `noise.json`).
    public static func noiseProfilePath(_ name: String) -> String {
        url(name, inFolder: "noise.json").relativePath
    }

    /// The noise profile a command uses when it was given none (``NoiseProfile/defaultPath(besides:machineID:)``'s
    /// rule: `noise.json` beside the results, else this checkout's profile of `machineID`'s kind):
    /// where it is (nil: none) and every place looked.
    public static func defaultNoiseProfile(besides folder: String, machineID: String? = nil) -> (
        found: String?, looked: [String]
    ) {
        NoiseProfile.defaultPath(besides: folder, machineID: machineID)
    }

    /// The run folder `path` (the history's input): every results and profile file in it.
    public static func folder(_ path: String) throws -> RunFolder {
        try RunFolder.read(path)
    }

    /// The run a report compares `results` (the files `files` of `folder`) with when it was given
    /// none (``PreviousRun``'s rule): the previous run of the same settings, newest among those
    /// made on a clean tree at an ancestor of `head`, else the newest; with its profile.
    public static func previousRun(
        in folder: String, besides files: [String], of results: ResultsFile, head: String, repository: String
    ) throws -> [String]? {
        try PreviousRun.find(in: folder, besides: files, of: results, head: head, repository: repository)
    }

    /// The conformance verdict `name` names (`conform --format json`'s; a folder: its
    /// `conformance.json`).
    public static func conformanceVerdict(_ name: String) throws -> ConformanceVerdict {
        try ConformanceVerdict.read(url(name, inFolder: "conformance.json").relativePath)
    }

    /// The conformance verdict beside the results in `folder` (the report's), or nil when there
    /// is none.
    public static func conformanceVerdict(besides folder: String) throws -> ConformanceVerdict? {
        let path = (folder as NSString).appendingPathComponent("conformance.json")
        return FileManager.default.fileExists(atPath: path) ? try ConformanceVerdict.read(path) : nil
    }

    /// `name`, or the file `file` in it when it is a folder.
    static func url(_ name: String, inFolder file: String) -> URL {
        var isDirectory: ObjCBool = false
        let url = URL(fileURLWithPath: name)
        if FileManager.default.fileExists(atPath: name, isDirectory: &isDirectory), isDirectory.boolValue {
            return url.appendingPathComponent(file)
        }
        return url
    }
}
