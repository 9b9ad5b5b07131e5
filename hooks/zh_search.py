"""MkDocs hook: teach jieba (the search plugin's Chinese segmenter) this site's terms.

Without it jieba cuts 位置编码 into 位置 / 编码, and a reader who types 位置编码 finds nothing
(lunr matches query terms as prefixes of indexed words). Each term below is kept whole, so
位置编码 and 位置 both find the pages.
"""

from __future__ import annotations

TERMS = (
    "位置编码", "正弦位置编码", "绝对位置编码", "相对位置编码", "可学习位置编码", "旋转位置编码",
    "位置嵌入", "词嵌入", "词元", "注意力分数", "自注意力", "注意力机制", "置换等变", "置换不变",
    "外推", "内插", "频率", "波长", "旋转矩阵", "点积", "偏置", "掩码", "填充", "上下文长度",
    "分桶", "勘误", "术语表", "交错配对", "对半配对", "部分旋转", "位置内插", "线性偏置",
)


def on_config(config, **kwargs):
    try:
        import jieba
    except ImportError:  # search still works, only with jieba's default dictionary
        return config
    for term in TERMS:
        jieba.add_word(term, freq=100000)
    return config
