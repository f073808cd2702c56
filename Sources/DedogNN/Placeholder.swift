public enum DedogNNPlaceholder {}
