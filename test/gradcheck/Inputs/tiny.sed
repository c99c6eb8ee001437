# Shrinks a spec of specs/ for the gradient checks: tiny sizes (d_model 16,
# 2 heads of 8 channels, d_ff 24, 2 layers, 40 words for classifiers,
# 8 random features, window 3, batch 3 of 8 positions, one layer per
# hourglass level) and no dropout, so that tfc_forward and tfc_train_step
# compute the same function. Every other key (attention kind, positions,
# activation, loss, hourglass resampling) is the spec's own.
s/^d_model = .*/d_model = 16/
s/^heads = .*/heads = 2/
s/^d_ff = .*/d_ff = 24/
s/^layers = .*/layers = 2/
s/^dropout = .*/dropout = 0.0/
s/^vocab = 20000.*/vocab = 40/
s/^features = .*/features = 8/
s/^window = .*/window = 3/
s/^batch = .*/batch = 3/
s/^seq_len = .*/seq_len = 8/
s/^layers_per_level = .*/layers_per_level = 1/
