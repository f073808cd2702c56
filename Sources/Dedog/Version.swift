public enum DedogVersion { public static let string = "0.1.0" }
