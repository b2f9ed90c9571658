/// Paths as users see them.
enum PathDisplay {
    static func resolve(_ path: String, against directory: String) -> String {
        path.hasPrefix("/") ? path : directory + "/" + path
    }

    /// `path` relative to `directory` (with `..` where needed), or absolute when
    /// the two share nothing but the root.
    static func relative(_ path: String, to directory: String) -> String {
        let p = path.split(separator: "/")
        let d = directory.split(separator: "/")
        var common = 0
        while common < p.count, common < d.count, p[common] == d[common] { common += 1 }
        if common == 0 { return path }
        let ups = Array(repeating: "..", count: d.count - common)
        let rest = p[common...].map(String.init)
        let joined = (ups + rest).joined(separator: "/")
        return joined.isEmpty ? "." : joined
    }
}
