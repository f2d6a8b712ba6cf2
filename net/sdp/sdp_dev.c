// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sdp: the RDMA devices SDP runs on.
 *
 * ib_sdp registers as an ib_client.  For every RDMA device that appears
 * (including ones added later, e.g. "rdma link add ... type rxe") it
 * allocates a struct sdp_device.  The device's client data holds the
 * initial reference, dropped when the device goes away; connections take
 * their own with sdp_dev_get() and drop it with sdp_dev_put().  Nothing
 * on the device is shared between connections: each allocates its own
 * protection domain (sdp_verbs.c), so that the memory keys it advertises
 * are valid on its own queue pair only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>

#include "sdp.h"

static struct ib_client sdp_client;

/* Serialises lookups (process context only) against removal: remove()
 * clears the client data under this lock before dropping the initial
 * reference, so a lookup either sees the device and takes a reference on
 * it, or sees NULL.
 */
static DEFINE_MUTEX(sdp_dev_lock);

static void sdp_dev_release(struct kref *ref)
{
	kfree(container_of(ref, struct sdp_device, ref));
}

/**
 * sdp_dev_get - take a reference on the SDP state of an RDMA device
 * @ibdev: the device, e.g. the one an rdma_cm_id is bound to
 *
 * Return: the device's state, or NULL if ib_sdp does not run on it.
 * Release it with sdp_dev_put().
 */
struct sdp_device *sdp_dev_get(struct ib_device *ibdev)
{
	struct sdp_device *sdev;

	mutex_lock(&sdp_dev_lock);
	sdev = ib_get_client_data(ibdev, &sdp_client);
	if (sdev)
		kref_get(&sdev->ref);
	mutex_unlock(&sdp_dev_lock);
	return sdev;
}

void sdp_dev_put(struct sdp_device *sdev)
{
	kref_put(&sdev->ref, sdp_dev_release);
}

static int sdp_dev_add(struct ib_device *ibdev)
{
	struct sdp_device *sdev;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->ibdev = ibdev;
	kref_init(&sdev->ref);
	mutex_lock(&sdp_dev_lock);
	ib_set_client_data(ibdev, &sdp_client, sdev);
	mutex_unlock(&sdp_dev_lock);
	dev_dbg(&ibdev->dev, "ib_sdp: using device\n");
	return 0;
}

static void sdp_dev_remove(struct ib_device *ibdev, void *client_data)
{
	struct sdp_device *sdev = client_data;

	mutex_lock(&sdp_dev_lock);
	ib_set_client_data(ibdev, &sdp_client, NULL);
	mutex_unlock(&sdp_dev_lock);
	dev_dbg(&ibdev->dev, "ib_sdp: device removed\n");
	sdp_dev_put(sdev);
}

static struct ib_client sdp_client = {
	.name	= "sdp",
	.add	= sdp_dev_add,
	.remove	= sdp_dev_remove,
};

int sdp_dev_init(void)
{
	return ib_register_client(&sdp_client);
}

void sdp_dev_exit(void)
{
	ib_unregister_client(&sdp_client);
}
